import type { ChatRequest } from '../../lib/llm/index.js';
import type { TimeWindow } from '../question/time-window.js';
import { isoIn, type AnswerSource } from './answer-sources.js';
import { captionLine } from './caption-lines.js';

/** What the prompt tells the model besides the captions. */
export interface PromptContext {
  now: number;
  zone: string;
  window?: TimeWindow;
  maxTokens: number;
  temperature: number;
}

const SYSTEM = [
  'You answer questions about what cameras saw, using only the numbered captions given to you.',
  'Each caption has its capture time and the camera or run it came from; several near-identical captions in a row',
  'are shown once with their time span. Cite every caption you use by its number in square brackets, e.g. [2].',
  'If the captions do not answer the question, say so plainly instead of guessing.',
].join(' ');

/** The chat request for a question and the captions retrieved for it. */
export function answerPrompt(question: string, sources: AnswerSource[], ctx: PromptContext): ChatRequest {
  const window = ctx.window
    ? `The question asks about ${ctx.window.phrase}: ${ctx.window.from !== undefined ? isoIn(ctx.window.from, ctx.zone) : 'the start'} to ${ctx.window.to !== undefined ? isoIn(ctx.window.to, ctx.zone) : 'now'}.\n`
    : '';
  const captions = sources.length > 0 ? sources.map(captionLine).join('\n') : '(no caption matches the question)';
  return {
    messages: [
      { role: 'system', content: `${SYSTEM} Times are in ${ctx.zone}; it is now ${isoIn(ctx.now, ctx.zone)}.` },
      { role: 'user', content: `Captions:\n${captions}\n\n${window}Question: ${question}` },
    ],
    maxTokens: ctx.maxTokens,
    temperature: ctx.temperature,
  };
}
