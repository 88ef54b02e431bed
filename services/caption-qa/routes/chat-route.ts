import Joi from 'joi';
import { defineRoute, openSseResponse, requestSignal, type RouteSpec } from '../../lib/http/index.js';
import { answerQuestion, type AnswerDeps } from '../chat/answer-question.js';
import { ChatEventStream } from '../chat/event-stream.js';
import { errorBodySchema, INPUT_REQUIRED, NO_CONTROL_CHARACTERS } from '../errors.js';

/** The chat request as validated: the question (other fields are allowed and ignored). */
export interface ChatRequest {
  input: string;
}

/** The chat request schema; every failure is the contract's detail. */
export function chatRequestSchema(maxQuestionChars: number): Joi.ObjectSchema<ChatRequest> {
  return Joi.object<ChatRequest, true>({
    input: Joi.string()
      .trim()
      .min(1)
      .max(maxQuestionChars)
      .pattern(NO_CONTROL_CHARACTERS)
      .required()
      .messages({
        'string.pattern.base': 'The input question must not contain control characters',
        'any.required': INPUT_REQUIRED,
        'string.empty': INPUT_REQUIRED,
        'string.base': INPUT_REQUIRED,
        'string.max': `The input question is over ${maxQuestionChars} characters`,
      })
      .description('The question'),
  })
    .unknown(true)
    .messages({ 'object.base': 'The request body must be a JSON object' })
    .label('ChatRequest');
}

const STREAM_EXAMPLE = [
  'event: sources',
  'data: [{"n":1,"id":"0190…","text":"A person opens the front door","time":"2026-03-10T14:05:00.000+01:00",…}]',
  '',
  'event: token',
  'data: {"text":"Someone opened the front door at 14:05 [1]."}',
  '',
  'event: done',
  'data: {"answerer":"llm","model":"qwen2.5"}',
].join('\n');

/** The events of the chat stream: each event's `data`. */
const chatStreamEvents = {
  sources: Joi.array()
    .items(
      Joi.object({
        n: Joi.number().integer().min(1).required().description('The number the answer cites ([1], [2], …)'),
        id: Joi.string().required(),
        text: Joi.string().allow('').required(),
        time: Joi.string().required().description('Capture time, ISO 8601 in the configured zone'),
        time_end: Joi.string().allow(null).required().description('End of the span of collapsed near-duplicates'),
        camera: Joi.string().allow(null).required(),
        run_id: Joi.string().allow(null).required(),
        frame_id: Joi.number().integer().allow(null).required(),
        score: Joi.number().required(),
        count: Joi.number().integer().min(1).required().description('Captions this entry stands for'),
        frame_url: Joi.string().allow(null).required().description('Where the frame is served while it is kept'),
      }),
    )
    .description('Once, first: the captions the answer uses'),
  token: Joi.object({ text: Joi.string().allow('').required() }).description('A piece of the answer'),
  done: Joi.object({
    answerer: Joi.string().valid('llm', 'offline').required(),
    model: Joi.string().required(),
  }).description('The answer is complete'),
  error: Joi.object({ message: Joi.string().required() }).description('The answer failed; the stream ends'),
};

/** POST /chat: the answer as Server-Sent Events. */
export function chatRoute(deps: AnswerDeps, maxQuestionChars: number): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/chat',
    summary: 'Ask a question about what the cameras saw; the answer streams as Server-Sent Events',
    description:
      'Events (each data line is JSON): `sources` once (the captions used), `token` {text} pieces of the answer, ' +
      'then `done` {answerer, model}; or `error` {message} after which the stream ends. Comment heartbeats ' +
      `(": heartbeat") while the first token is awaited. Example:\n\n\`\`\`\n${STREAM_EXAMPLE}\n\`\`\``,
    tags: ['chat'],
    request: { body: chatRequestSchema(maxQuestionChars) },
    responses: {
      200: { description: 'The answer stream', contentType: 'text/event-stream', events: chatStreamEvents },
      422: { description: 'input missing or empty', schema: errorBodySchema },
    },
    handler: async (ctx) => {
      const { input } = ctx.state.body;
      const signal = requestSignal(ctx);
      const stream = new ChatEventStream(openSseResponse(ctx));
      await answerQuestion(deps, input, stream, signal, ctx.state.requestId);
    },
  });
}
