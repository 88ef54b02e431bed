import { asksForRecency } from './recency.js';
import { findSourceMentions, type KnownSources, type SourceMentions } from './source-mentions.js';
import { parseTimeWindow, type TimeContext, type TimeWindow } from './time-window.js';

/** Returns the present in Unix milliseconds; injectable so that tests fix "now". */
export type Clock = () => number;

/** What retrieval needs from a question. */
export interface ParsedQuestion {
  /** The question as asked (trimmed): what is embedded. */
  text: string;
  window?: TimeWindow;
  sources: SourceMentions;
  /** The question is about the latest events: answers list captions newest first. */
  recency: boolean;
}

/** Reads a question's time words, named sources and recency. Pure given `ctx` and `known`. */
export function parseQuestion(question: string, ctx: TimeContext, known: KnownSources): ParsedQuestion {
  const text = question.trim();
  const window = parseTimeWindow(text, ctx);
  return {
    text,
    window,
    sources: findSourceMentions(text, known),
    recency: asksForRecency(text) || (window?.to !== undefined && window.to >= ctx.now),
  };
}
