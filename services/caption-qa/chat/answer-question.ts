import { LlmError } from '../../lib/llm/index.js';
import type { Logger } from '../../lib/log/index.js';
import { answerSources } from '../answer/answer-sources.js';
import { OFFLINE_MODEL, offlineAnswer } from '../answer/offline-answer.js';
import { answerPrompt } from '../answer/prompt.js';
import type { KeptFrames } from '../frames/kept-frames.js';
import { parseQuestion, type Clock } from '../question/parse-question.js';
import type { KnownSources } from '../question/source-mentions.js';
import type { Retriever } from '../retrieval/retriever.js';
import type { AnswerModel } from './answer-model.js';
import type { ChatEventStream } from './event-stream.js';

/** What answering needs. */
export interface AnswerDeps {
  retriever: Retriever;
  keptFrames: Pick<KeptFrames, 'has'>;
  knownSources: () => Promise<KnownSources>;
  model?: AnswerModel;
  clock: Clock;
  logger: Logger;
  zone: string;
  atToleranceMs: number;
  heartbeatMs: number;
  maxTokens: number;
  temperature: number;
}

/** The message of an `error` event for a model failure: the LlmError's own text is short and safe by contract. */
function modelFailure(error: unknown): string {
  return error instanceof LlmError ? `The language model failed: ${error.message}` : 'The language model failed';
}

/**
 * Answers one question on an open event stream: heartbeats until the first token, retrieval, one `sources` event,
 * the answer as `token` events (the model's deltas, or the offline answer), then `done`; a failure after the stream
 * opened is an `error` event and the stream ends. `signal` (the client leaving, the server stopping) cancels the
 * model call; the stream then just ends.
 */
export async function answerQuestion(
  deps: AnswerDeps,
  question: string,
  stream: ChatEventStream,
  signal: AbortSignal,
  requestId: string,
): Promise<void> {
  stream.startHeartbeat(deps.heartbeatMs);
  try {
    const now = deps.clock();
    const parsed = parseQuestion(
      question,
      { now, zone: deps.zone, atToleranceMs: deps.atToleranceMs },
      await deps.knownSources(),
    );
    let sources;
    try {
      sources = await answerSources(await deps.retriever.retrieve(parsed), deps.zone, deps.keptFrames);
    } catch (error) {
      deps.logger.error('caption retrieval failed', { requestId, error: (error as Error).message });
      stream.send('error', { message: 'Retrieval failed: the caption store is unavailable' });
      return;
    }
    stream.send('sources', sources);
    if (!deps.model) {
      stream.stopHeartbeat();
      for (const text of offlineAnswer(sources, parsed.recency, parsed.window)) stream.send('token', { text });
      stream.send('done', { answerer: 'offline', model: OFFLINE_MODEL });
      return;
    }
    const request = answerPrompt(parsed.text, sources, {
      now,
      zone: deps.zone,
      window: parsed.window,
      maxTokens: deps.maxTokens,
      temperature: deps.temperature,
    });
    try {
      for await (const text of deps.model.stream(request, signal)) {
        stream.stopHeartbeat();
        if (!stream.open) break;
        stream.send('token', { text });
      }
    } catch (error) {
      if (signal.aborted) return;
      deps.logger.warn('language model failed mid-answer', { requestId, error: (error as Error).message });
      stream.send('error', { message: modelFailure(error) });
      return;
    }
    if (!signal.aborted) stream.send('done', { answerer: 'llm', model: deps.model.model });
  } finally {
    stream.end();
  }
}
