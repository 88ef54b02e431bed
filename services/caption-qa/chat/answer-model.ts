import type { ChatRequest } from '../../lib/llm/index.js';

/** The language model port: content deltas of a streamed chat completion (ChatCompletionsClient fills it). */
export interface AnswerModel {
  readonly model: string;
  /** Yields content deltas; aborting `signal` (or leaving the loop) cancels the upstream request. */
  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<string>;
}
