import type { RgbImage, RunGate } from '../../lib/inference/roles.js';
import type { VideoInfo } from '../../lib/media/probe-video.js';
import type { VectorRecord } from '../../lib/vectors/vector-store.js';
import type { EmbedMediaDeps, EmbedMediaOptions, EmbedMediaRequest } from './embed-request.js';
import type { EmbeddingSubject, MediaMetadataBase } from './metadata.js';
import type { BatchLog, EmbedMediaResult, PipelineClock } from './pipeline-stats.js';

/** One image to embed: a whole frame/image or an object crop, with what its metadata needs. */
export interface EmbedItem {
  image: RgbImage;
  subject: EmbeddingSubject;
  /** The text stored in the description store beside it, when there is one. */
  description?: { text: string; positions?: string[] };
}

/** Records of one embedder batch: image vectors, and the descriptions of the same items. */
export interface RecordGroup {
  images: VectorRecord[];
  descriptions: VectorRecord[];
}

/** What a run has done so far, for its result, its log line and its rollback. */
export interface RunCounts {
  framesExtracted: number;
  cropsDetected: number;
  itemsEmbedded: number;
  embeddingsStored: number;
  /** True once the first insert began: a failure from then on removes the run's vectors. */
  insertStarted: boolean;
}

/** Which detections a run keeps: crops at the request's confidence, descriptions from a lower score. */
export interface DetectionPlan {
  enabled: boolean;
  /** Crops are embedded from this score. */
  confidence: number;
  /** Frame and object descriptions are written (detection on and a description sink given). */
  describe: boolean;
  /** Descriptions name what scores at least this, even below `confidence`. */
  descriptionMinScore: number;
  /** What the detector is asked for: the lower of the two when describing. */
  detectMinScore: number;
}

/** One run of embedMedia as its stages share it: what to embed and how, its clock, stop signal and counts. */
export interface PipelineRun {
  deps: EmbedMediaDeps;
  request: EmbedMediaRequest;
  settings: Required<EmbedMediaOptions>;
  runId: string;
  /** Canonical metadata every record of the run carries. */
  base: MediaMetadataBase;
  isVideo: boolean;
  frameInterval: number;
  /** The probed video (undefined for an image). */
  videoInfo?: VideoInfo;
  /** Its frame rate, frames and duration as the result reports them (an image: one frame of no duration). */
  video: EmbedMediaResult['video'];
  /** The size video frames are decoded at (at most `maxFrameSide` on their longer side); undefined for an image. */
  decodeSize?: { width: number; height: number };
  /** Decoded px × sourceScale = source px (1 for images and for videos no larger than maxFrameSide). */
  sourceScale: number;
  detection: DetectionPlan;
  clock: PipelineClock;
  /** Stops every stage: the caller's abort, or the first stage to fail. */
  signal: AbortSignal;
  /** Model slots of the detector's and the embedder's runs. */
  gates: { detect: RunGate; embed: RunGate };
  counts: RunCounts;
  batches: BatchLog;
}
