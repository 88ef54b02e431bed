import { DateTime } from 'luxon';
import type { KeptFrames } from '../frames/kept-frames.js';
import type { RetrievedCaption } from '../retrieval/collapse.js';

/** Path of a kept frame, relative to the service root (`GET /api/frames/{id}`). */
export function framePath(id: string): string {
  return `/api/frames/${id}`;
}

/** One entry of the `sources` event: a caption the answer used, numbered as the answer cites it. */
export interface AnswerSource {
  /** The number the answer cites ([1], [2], …). */
  n: number;
  id: string;
  text: string;
  /** Capture time, ISO 8601 in the configured zone; with `time_end`, the span of collapsed near-duplicates. */
  time: string;
  time_end: string | null;
  camera: string | null;
  run_id: string | null;
  frame_id: number | null;
  score: number;
  /** Captions this entry stands for (near-identical neighbours collapsed into it). */
  count: number;
  /** Where the caption's frame is served while it is kept, else null. */
  frame_url: string | null;
}

/** ISO 8601 of a Unix-ms time in `zone`. */
export function isoIn(ms: number, zone: string): string {
  return DateTime.fromMillis(ms, { zone }).toISO() ?? new Date(ms).toISOString();
}

/** The `sources` entries of the captions, in the answer's order, with frame URLs of the frames still kept. */
export async function answerSources(
  captions: RetrievedCaption[],
  zone: string,
  frames: Pick<KeptFrames, 'has'>,
): Promise<AnswerSource[]> {
  const kept = await Promise.all(
    captions.map((c) => (c.frameKey ? frames.has(c.frameKey).catch(() => false) : Promise.resolve(false))),
  );
  return captions.map((c, i) => ({
    n: i + 1,
    id: c.id,
    text: c.text,
    time: isoIn(c.timestamp, zone),
    time_end: c.until !== undefined && c.until !== c.timestamp ? isoIn(c.until, zone) : null,
    camera: c.camera ?? null,
    run_id: c.runId ?? null,
    frame_id: c.frameId ?? null,
    score: Math.round(c.score * 1e4) / 1e4,
    count: c.count,
    frame_url: kept[i] ? framePath(c.id) : null,
  }));
}
