import type { MetadataValue } from '../../lib/vectors/index.js';

/** What a hit shows: a whole frame or image, a detected object, or a clip summary. */
export type HitKind = 'frame' | 'object' | 'summary';

/** The filters of a search; every one given must hold. */
export interface SearchFilters {
  bucketName?: string;
  videoIds?: string[];
  tags?: { values: string[]; match: 'any' | 'all' };
  labels?: { values: string[]; match: 'any' | 'all' };
  /** Ingest time, seconds since the epoch, inclusive. */
  ingestedFrom?: number;
  ingestedTo?: number;
  /** Position in the video, seconds, inclusive. */
  fromSeconds?: number;
  toSeconds?: number;
  /** User metadata: a scalar must equal, a list names the values allowed. */
  metadata?: Record<string, MetadataValue>;
}

/** A validated search request, less what is searched with. */
export interface SearchQuery {
  filters: SearchFilters;
  kinds: HitKind[];
  topK: number;
  minScore?: number;
  groupByVideo: boolean;
  collapse: boolean;
}

/** One search answer entry. */
export interface SearchHit {
  video_id: string;
  bucket_name: string;
  kind: HitKind;
  /** Seconds into the video (0 for images; a summary's start). */
  timestamp: number;
  frame_id: number;
  score: number;
  tags: string[];
  /** User metadata of the media (directory ingests). */
  metadata: Record<string, MetadataValue>;
  video_name?: string;
  media_type?: string;
  /** Object hits: the detected class and its box [x1, y1, x2, y2] in source pixels. */
  label?: string;
  bbox?: number[];
  /** Classes detected in the frame. */
  labels?: string[];
  /** The frame's or object's description (text searches), or the summary text. */
  description?: string;
  /** A span: the collapsed run of near-identical frames, or the summary's clip. */
  from_seconds?: number;
  to_seconds?: number;
  thumbnail_url: string;
  video_url: string;
}
