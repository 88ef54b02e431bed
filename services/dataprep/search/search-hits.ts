import type { MetadataValue } from '../../lib/vectors/index.js';
import { isReservedMetadataKey } from '../pipeline/metadata.js';
import type { HitKind, SearchHit } from './search-query.js';

/** Width of the thumbnails hits link to (GET /media/frame). */
export const THUMBNAIL_WIDTH = 320;

/** The `kind` a stored record is answered as. */
export function hitKindOf(metadata: Record<string, MetadataValue>): HitKind {
  return metadata.kind === 'crop' ? 'object' : metadata.kind === 'summary' ? 'summary' : 'frame';
}

/** One moment of one media item, whichever store a record of it came from. */
export function momentKey(metadata: Record<string, MetadataValue>): string {
  const kind = hitKindOf(metadata);
  const detail = kind === 'object' ? metadata.crop_id : kind === 'summary' ? metadata.video_end_time : '';
  return [metadata.bucket_name, metadata.video_id, kind, metadata.timestamp, detail].join('\u0000');
}

const num = (value: MetadataValue | undefined, fallback = 0) => (typeof value === 'number' ? value : fallback);
/** The strings of a list-valued metadata field; empty when it is no list. */
export const metadataStrings = (value: MetadataValue | undefined): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/**
 * The answer entry of a stored record: canonical fields by name, user metadata apart, a thumbnail of the moment and
 * a `video_url` that plays from it (the download URL with a `#t=<seconds>` media fragment, which browsers and video
 * players seek to; images have none).
 */
export function toHit(metadata: Record<string, MetadataValue>, score: number, basePath: string): SearchHit {
  const kind = hitKindOf(metadata);
  const bucket = String(metadata.bucket_name);
  const videoId = String(metadata.video_id);
  const timestamp = num(metadata.timestamp);
  const where = { bucket_name: bucket, video_id: videoId };
  const isImage = metadata.media_type === 'image';
  const frame = new URLSearchParams({ ...where, t: String(timestamp), width: String(THUMBNAIL_WIDTH) });
  const user = Object.fromEntries(Object.entries(metadata).filter(([key]) => !isReservedMetadataKey(key)));
  const hit: SearchHit = {
    video_id: videoId,
    bucket_name: bucket,
    kind,
    timestamp,
    frame_id: num(metadata.frame_id),
    score: Number(score.toFixed(6)),
    tags: metadataStrings(metadata.tags),
    metadata: user,
    thumbnail_url: `${basePath}/media/frame?${frame}`,
    video_url: `${basePath}/media/download?${new URLSearchParams(where)}${isImage ? '' : `#t=${timestamp}`}`,
  };
  if (typeof metadata.video_name === 'string') hit.video_name = metadata.video_name;
  if (typeof metadata.media_type === 'string') hit.media_type = metadata.media_type;
  if (kind === 'object') {
    hit.label = String(metadata.label);
    hit.bbox = Array.isArray(metadata.bbox) ? metadata.bbox.map(Number) : [];
  }
  if (Array.isArray(metadata.labels)) hit.labels = metadataStrings(metadata.labels);
  if (typeof metadata.description === 'string') hit.description = metadata.description;
  if (kind === 'summary') {
    hit.description = String(metadata.summary ?? '');
    hit.from_seconds = num(metadata.video_start_time, timestamp);
    hit.to_seconds = num(metadata.video_end_time, timestamp);
  }
  return hit;
}

/** A hit with what collapsing needs: the sampling step of its video. */
export interface RankedHit {
  hit: SearchHit;
  /** Seconds between two sampled frames of its video (0 when unknown or an image). */
  step: number;
}

/** Scores closer than this are "near-identical" for collapsing. */
const COLLAPSE_SCORE_GAP = 0.02;

/**
 * Merges runs of near-identical consecutive frames of one video into their best hit, which gets `from_seconds` and
 * `to_seconds`: frame hits one sampling step apart, scoring within COLLAPSE_SCORE_GAP of each other and, when
 * described, described alike. `ranked` is best first; so is the answer.
 */
export function collapseRuns(ranked: RankedHit[]): SearchHit[] {
  const taken = new Set<RankedHit>();
  const out: SearchHit[] = [];
  const frames = ranked.filter((r) => r.hit.kind === 'frame' && r.step > 0);
  for (const seed of ranked) {
    if (taken.has(seed)) continue;
    taken.add(seed);
    if (seed.hit.kind !== 'frame' || seed.step <= 0) {
      out.push(seed.hit);
      continue;
    }
    const alike = (r: RankedHit) =>
      !taken.has(r) &&
      r.hit.bucket_name === seed.hit.bucket_name &&
      r.hit.video_id === seed.hit.video_id &&
      Math.abs(r.hit.score - seed.hit.score) <= COLLAPSE_SCORE_GAP &&
      r.hit.description === seed.hit.description;
    let from = seed.hit.timestamp;
    let to = seed.hit.timestamp;
    for (let grew = true; grew;) {
      grew = false;
      for (const r of frames) {
        if (!alike(r)) continue;
        const t = r.hit.timestamp;
        if (t < from && from - t <= seed.step * 1.5) from = t;
        else if (t > to && t - to <= seed.step * 1.5) to = t;
        else continue;
        taken.add(r);
        grew = true;
      }
    }
    out.push(from === to ? seed.hit : { ...seed.hit, from_seconds: from, to_seconds: to });
  }
  return out;
}

/** The best hit of each video, in order (`hits` best first). */
export function bestPerVideo(hits: SearchHit[]): SearchHit[] {
  const seen = new Set<string>();
  return hits.filter((hit) => {
    const key = `${hit.bucket_name}\u0000${hit.video_id}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Seconds between two sampled frames of the record's video (0 for images or when unknown). */
export function samplingStep(metadata: Record<string, MetadataValue>): number {
  const fps = num(metadata.fps);
  return metadata.media_type === 'video' && fps > 0 ? num(metadata.frame_interval, 1) / fps : 0;
}
