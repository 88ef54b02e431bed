import type { TimeWindow } from '../question/time-window.js';
import type { AnswerSource } from './answer-sources.js';
import { captionLine } from './caption-lines.js';

/** What `/api/model` names and `done` carries when no language model is configured. */
export const OFFLINE_MODEL = 'offline-caption-answerer';

/** The label every offline answer starts with, so that nobody mistakes it for a model's answer. */
export const OFFLINE_LABEL = 'Offline answer (no language model is configured)';

/**
 * The offline answer, as the pieces streamed one `token` event each: the label, then the retrieved captions with
 * their times and sources, newest first for recency questions and most relevant first otherwise.
 */
export function offlineAnswer(sources: AnswerSource[], recency: boolean, window?: TimeWindow): string[] {
  const scope = window ? ` (${window.phrase})` : '';
  if (sources.length === 0) return [`${OFFLINE_LABEL}: no stored caption matches the question${scope}.`];
  const ordered = recency
    ? [...sources].sort((a, b) => Date.parse(b.time_end ?? b.time) - Date.parse(a.time_end ?? a.time))
    : sources;
  const order = recency ? 'newest first' : 'most relevant first';
  return [
    `${OFFLINE_LABEL}: the captions that best match the question${scope}, ${order}:\n`,
    ...ordered.map((source) => `${captionLine(source)}\n`),
  ];
}
