import { DateTime } from 'luxon';
import type { AnswerSource } from './answer-sources.js';

function clock(iso: string): string {
  return DateTime.fromISO(iso, { setZone: true }).toFormat('yyyy-LL-dd HH:mm:ss');
}

/** "2026-03-10 14:05:00–14:06:10" (the span of collapsed captions) or "2026-03-10 14:05:00". */
export function timeLabel(source: AnswerSource): string {
  if (!source.time_end) return clock(source.time);
  return `${clock(source.time)}–${DateTime.fromISO(source.time_end, { setZone: true }).toFormat('HH:mm:ss')}`;
}

/** "camera front-door, run r1" or "unknown source". */
export function sourceLabel(source: AnswerSource): string {
  const parts = [source.camera ? `camera ${source.camera}` : '', source.run_id ? `run ${source.run_id}` : ''];
  return parts.filter(Boolean).join(', ') || 'unknown source';
}

/** One numbered caption line, as both answerers show captions: "[1] 2026-… (camera x): text (3 similar captions)". */
export function captionLine(source: AnswerSource): string {
  const repeated = source.count > 1 ? ` (${source.count} similar captions)` : '';
  return `[${source.n}] ${timeLabel(source)} (${sourceLabel(source)}): ${source.text}${repeated}`;
}
