import type { ImageDescriptorName } from '../../lib/inference/image-descriptor.js';
import type { Detector, ImageEmbedder, TextEmbedder } from '../../lib/inference/roles.js';
import type { FfmpegPaths } from '../../lib/media/ffmpeg-paths.js';
import type { MetadataValue, VectorStore } from '../../lib/vectors/vector-store.js';

/** The log methods the pipeline uses (a winston Logger fits). */
export interface PipelineLogger {
  info(message: string, meta?: Record<string, unknown>): unknown;
  warn(message: string, meta?: Record<string, unknown>): unknown;
  debug(message: string, meta?: Record<string, unknown>): unknown;
}

/** Where frame and object descriptions go: the text embedder and the store of its dimension. */
export interface DescriptionSink {
  textEmbedder: TextEmbedder;
  store: VectorStore;
}

/** What embedMedia works with: the two models, the vector store, a logger and optionally configured ffmpeg paths. */
export interface EmbedMediaDeps {
  imageEmbedder: ImageEmbedder;
  /** How images become vectors (default CURRENT_IMAGE_DESCRIPTOR); written on each record as `image_descriptor`. */
  imageDescriptor?: ImageDescriptorName;
  detector: Detector;
  vectors: VectorStore;
  /**
   * With detection on, each frame and object crop also gets a text description (services/lib/scene-description)
   * embedded into this store, so text queries find it; without it, none is written.
   */
  descriptions?: DescriptionSink;
  logger: PipelineLogger;
  ffmpegPaths?: Partial<FfmpegPaths>;
}

/** One media item to embed. */
export interface EmbedMediaRequest {
  /** Local file (ffmpeg needs a seekable file for MP4). */
  localPath: string;
  kind: 'video' | 'image';
  bucketName: string;
  videoId: string;
  filename: string;
  /** Every Nth frame (videos; 1–60 at the HTTP layer). Ignored for images. */
  frameInterval: number;
  detection: { enabled: boolean; confidence: number };
  tags: string[];
  /**
   * Names this run's embeddings (metadata `run_id`, and part of their record ids) so that they can be written beside
   * an earlier run's and told apart from them; a fresh UUID when omitted.
   */
  runId?: string;
  /**
   * User metadata stored as top-level keys; must not use canonical keys (ReservedMetadataKeyError). Directory ingest
   * sets it (request `metadata` + sidecar files).
   */
  extraMetadata?: Record<string, MetadataValue>;
  /** Origin path of media ingested from a directory (host terms when configured); recorded as `source_path`. */
  sourcePath?: string;
  videoUrl: string;
  /** ISO-8601 time the media was received. */
  uploadedAt: string;
  /** Cooperative cancellation, checked between frames; an aborted run is rolled back like a failed one. */
  signal?: AbortSignal;
}

/** Pipeline tuning; the defaults suit a 2-core CPU machine. */
export interface EmbedMediaOptions {
  /** Images per embedder call. */
  embedBatchSize?: number;
  /** Records per vector-store insert (fewer, larger inserts keep LanceDB fragments few). */
  writeBatchSize?: number;
  /** Decoded frames waiting for detection (ffmpeg may decode this many more ahead of the queue). */
  frameQueueDepth?: number;
  /**
   * Video frames are decoded at most this many pixels on their longer side (default 1920), which bounds memory for 4K
   * input; models see 512 px or less anyway. Crop boxes in metadata are mapped back to source pixels.
   */
  maxFrameSide?: number;
  /**
   * ffmpeg decoder threads (default 1; 0: ffmpeg's choice). One thread still decodes 720p H.264 several times faster
   * than CPU models consume frames, and spends ~20% less CPU than frame threading, CPU the model runs then keep
   * (measured: pipeline/model-bound ratio 0.84 → 0.87 on 2 cores). Raise it when models run on a GPU.
   */
  decodeThreads?: number;
  /**
   * ffmpeg niceness (default 5): decoding mostly fills the CPU gaps between model calls instead of slowing them, yet
   * still gets a fair share on a busy machine (at 10 it starved when other processes competed for the cores).
   */
  decodeNiceness?: number;
  /**
   * Model runs (detector or embedder) allowed at once. 1 on CPU: a session already uses all cores, and concurrent
   * sessions measured ~2× slower each. Raise it for a GPU or when sessions are given fewer threads. Only the runs are
   * limited: preprocessing the next input overlaps with the current run when sessions live on worker threads.
   */
  modelConcurrency?: number;
}

const DEFAULTS: Required<EmbedMediaOptions> = {
  embedBatchSize: 8,
  writeBatchSize: 64,
  frameQueueDepth: 3,
  maxFrameSide: 1920,
  modelConcurrency: 1,
  decodeNiceness: 5,
  decodeThreads: 1,
};

/** The tuning a run uses: each option given, else its default. */
export function pipelineSettings(options: EmbedMediaOptions): Required<EmbedMediaOptions> {
  const settings = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS) as Array<keyof EmbedMediaOptions>)
    settings[key] = options[key] ?? DEFAULTS[key];
  return settings;
}
