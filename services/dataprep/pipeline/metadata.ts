import type { MetadataValue } from '../../lib/vectors/vector-store.js';

/**
 * Every metadata key dataprep itself writes on an embedding (README "Embedding metadata"). User metadata must not use
 * any of these names (compared case-insensitively).
 *
 * - video_id, bucket_name: where the media lives; video_name and filename: the media's file name (same value).
 * - frame_id: source frame index (0 for images); timestamp: seconds into the video (0 for images).
 * - frame_interval, fps, total_frames, video_duration_seconds: how the video was sampled (images: 1, 0, 1, 0).
 * - tags: list of strings; upload_time: when the media was received; creation_time: when the embedding was made (ISO).
 * - video_url: where the media can be fetched (download URL); source_path: origin path of referenced media.
 * - run_id: the processing run that wrote the embedding (a re-process writes a new run beside the old, then removes
 *   the old one).
 * - kind: `frame` | `image` | `crop` | `summary`; media_type: `video` | `image`.
 * - crops only: label (COCO class), bbox (list of 4 numbers [x1, y1, x2, y2] in source pixels), crop_id (index of the
 *   crop within its frame, best score first), score (detector confidence), parent_frame_id (frame_id of its frame).
 * - summaries only: video_start_time, video_end_time (seconds), summary (the summary text).
 * - upload_ts: upload_time as seconds since the epoch (a number, for time-range filters).
 * - frames and images with detection on: labels (distinct detected classes, list of strings).
 * - frames, images and crops: image_descriptor (how the vector was made, lib/inference/image-descriptor.ts; absent on
 *   vectors written before it existed, which are `global-v1`).
 * - descriptions only (the description store, search/): description (the text embedded), positions
 *   (`<label>@left|centre|right`).
 */
export const CANONICAL_METADATA_KEYS = [
  'video_id',
  'bucket_name',
  'video_name',
  'filename',
  'frame_id',
  'timestamp',
  'frame_interval',
  'fps',
  'total_frames',
  'video_duration_seconds',
  'tags',
  'upload_time',
  'creation_time',
  'video_url',
  'source_path',
  'run_id',
  'kind',
  'media_type',
  'label',
  'bbox',
  'crop_id',
  'score',
  'parent_frame_id',
  'video_start_time',
  'video_end_time',
  'summary',
  'upload_ts',
  'labels',
  'description',
  'positions',
  'image_descriptor',
] as const;

/** One canonical metadata key. */
export type CanonicalMetadataKey = (typeof CANONICAL_METADATA_KEYS)[number];

/** What an embedding represents. */
export type EmbeddingKind = 'frame' | 'image' | 'crop' | 'summary';

const RESERVED = new Set<string>(CANONICAL_METADATA_KEYS.map((key) => key.toLowerCase()));

/** True when `key` collides with a canonical metadata name (case-insensitive), i.e. user metadata may not use it. */
export function isReservedMetadataKey(key: string): boolean {
  return RESERVED.has(key.toLowerCase());
}

/** Thrown when user metadata uses a canonical key. */
export class ReservedMetadataKeyError extends Error {
  constructor(readonly keys: string[]) {
    super(`metadata keys are reserved: ${keys.join(', ')}`);
    this.name = 'ReservedMetadataKeyError';
  }
}

/** Throws ReservedMetadataKeyError when any key of `metadata` is canonical. */
export function assertNoReservedKeys(metadata: Record<string, unknown> | undefined): void {
  const clashes = Object.keys(metadata ?? {}).filter(isReservedMetadataKey);
  if (clashes.length) throw new ReservedMetadataKeyError(clashes);
}

/** Fields shared by every embedding of one media item. */
export interface MediaMetadataBase {
  bucketName: string;
  videoId: string;
  filename: string;
  mediaType: 'video' | 'image';
  frameInterval: number;
  fps: number;
  totalFrames: number;
  durationSeconds: number;
  tags: string[];
  uploadedAt: string;
  videoUrl: string;
  /** The processing run writing the embeddings (absent for summaries, which no run replaces). */
  runId?: string;
  /** Origin path of referenced media (directory ingest); omitted when absent. */
  sourcePath?: string;
  /** User metadata, stored as top-level keys beside the canonical ones (must not use canonical names). */
  extra?: Record<string, MetadataValue>;
}

/** What distinguishes one embedding of the media from the others. */
export type EmbeddingSubject =
  | {
      kind: 'frame' | 'image';
      frameId: number;
      timestampSeconds: number;
      /** Distinct detected classes; omitted when detection did not run. */
      labels?: string[];
    }
  | {
      kind: 'crop';
      frameId: number;
      timestampSeconds: number;
      label: string;
      bbox: [number, number, number, number];
      cropId: number;
      score: number;
    };

const round = (value: number, digits: number) => Number(value.toFixed(digits));

/** Builds the full metadata of one frame, image or crop embedding (canonical keys first, then user metadata). */
export function buildEmbeddingMetadata(
  base: MediaMetadataBase,
  subject: EmbeddingSubject,
  createdAt: string,
): Record<string, MetadataValue> {
  const metadata: Record<string, MetadataValue> = {
    ...base.extra,
    video_id: base.videoId,
    bucket_name: base.bucketName,
    video_name: base.filename,
    filename: base.filename,
    frame_id: subject.frameId,
    timestamp: round(subject.timestampSeconds, 6),
    frame_interval: base.frameInterval,
    fps: base.fps,
    total_frames: base.totalFrames,
    video_duration_seconds: base.durationSeconds,
    tags: [...base.tags],
    upload_time: base.uploadedAt,
    upload_ts: Date.parse(base.uploadedAt) / 1000,
    creation_time: createdAt,
    video_url: base.videoUrl,
    kind: subject.kind,
    media_type: base.mediaType,
  };
  if (base.runId !== undefined) metadata.run_id = base.runId;
  if (base.sourcePath !== undefined) metadata.source_path = base.sourcePath;
  if (subject.kind !== 'crop' && subject.labels) metadata.labels = [...subject.labels];
  if (subject.kind === 'crop') {
    metadata.label = subject.label;
    metadata.bbox = subject.bbox.map((v) => round(v, 2));
    metadata.crop_id = subject.cropId;
    metadata.score = round(subject.score, 4);
    metadata.parent_frame_id = subject.frameId;
  }
  return metadata;
}

/** Builds the metadata of a clip summary embedding (kind `summary`, timestamp = start of the clip). */
export function buildSummaryMetadata(
  base: MediaMetadataBase,
  clip: { startSeconds: number; endSeconds: number; summary: string },
  createdAt: string,
): Record<string, MetadataValue> {
  const frameId = Math.round(clip.startSeconds * base.fps);
  return {
    ...buildEmbeddingMetadata(base, { kind: 'frame', frameId, timestampSeconds: clip.startSeconds }, createdAt),
    kind: 'summary',
    video_start_time: clip.startSeconds,
    video_end_time: clip.endSeconds,
    summary: clip.summary,
  };
}
