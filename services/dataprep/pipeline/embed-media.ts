import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { linkAbort } from '../../lib/abort/index.js';
import { cropDetection } from '../../lib/inference/crop.js';
import type { Detection, Detector, ImageEmbedder, RgbImage, RunGate, TextEmbedder } from '../../lib/inference/roles.js';
import type { FfmpegPaths } from '../../lib/media/ffmpeg-paths.js';
import { decodeImage } from '../../lib/media/image-decode.js';
import { probeVideo, type VideoInfo } from '../../lib/media/probe-video.js';
import { extractFrames, type VideoFrame } from '../../lib/media/video-frames.js';
import type { MetadataValue, VectorRecord, VectorStore } from '../../lib/vectors/vector-store.js';
import {
  DESCRIPTION_MIN_SCORE,
  describeFrame,
  describeObject,
  type FrameDescription,
} from '../descriptions/frame-description.js';
import { BoundedQueue } from './bounded-queue.js';
import {
  assertNoReservedKeys,
  buildEmbeddingMetadata,
  type EmbeddingSubject,
  type MediaMetadataBase,
} from './metadata.js';
import { embeddingRecordId } from './record-id.js';
import { Semaphore } from './semaphore.js';
import { BatchLog, PipelineClock, round3, type EmbedMediaResult } from './pipeline-stats.js';

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
  detector: Detector;
  vectors: VectorStore;
  /**
   * With detection on, each frame and object crop also gets a text description (search/frame-description.ts)
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

const DEFAULTS = {
  embedBatchSize: 8,
  writeBatchSize: 64,
  frameQueueDepth: 3,
  maxFrameSide: 1920,
  modelConcurrency: 1,
  decodeNiceness: 5,
  decodeThreads: 1,
} as const;

/** One image to embed: a whole frame/image or an object crop, with what its metadata needs. */
interface EmbedItem {
  image: RgbImage;
  subject: EmbeddingSubject;
  /** The text stored in the description store beside it, when there is one. */
  description?: { text: string; positions?: string[] };
}

/** Records of one embedder batch: image vectors, and the descriptions of the same items. */
interface RecordGroup {
  images: VectorRecord[];
  descriptions: VectorRecord[];
}

/** Distinct description texts whose vectors a run keeps (consecutive frames mostly repeat theirs). */
const DESCRIPTION_CACHE_ENTRIES = 512;

/**
 * Embeds one video (every `frameInterval`-th frame) or image, plus, with detection on, every detected object crop
 * scoring at least `detection.confidence`, and stores the vectors with canonical metadata.
 *
 * Stages run concurrently, linked by bounded queues: ffmpeg decodes ahead (separate process) → detection + cropping
 * → embedding in batches of `embedBatchSize` → inserts of up to `writeBatchSize` records. A slow stage blocks the
 * earlier ones (backpressure), so memory stays bounded whatever the video length.
 *
 * Failure semantics: if any stage fails or `signal` aborts after the first insert began, the vectors of this run
 * (`run_id`) are deleted before the error is rethrown; vectors of other runs of the same video are never touched, so
 * a failed re-process leaves the previous set as it was. Removing that previous set once this run is complete is the
 * caller's step (MediaProcessing).
 */
export async function embedMedia(
  deps: EmbedMediaDeps,
  request: EmbedMediaRequest,
  options: EmbedMediaOptions = {},
): Promise<EmbedMediaResult> {
  const embedBatchSize = options.embedBatchSize ?? DEFAULTS.embedBatchSize;
  const writeBatchSize = options.writeBatchSize ?? DEFAULTS.writeBatchSize;
  assertNoReservedKeys(request.extraMetadata);
  request.signal?.throwIfAborted();
  const runId = request.runId ?? randomUUID();
  const clock = new PipelineClock();
  const models = new Semaphore(options.modelConcurrency ?? DEFAULTS.modelConcurrency);
  // The model slot is taken for the session run alone; the time a call waits for it is not that stage's busy time.
  const gateFor =
    (stage: 'detect' | 'embed'): RunGate =>
    (run) => {
      const queued = performance.now();
      return models.run(() => {
        clock.excludeWait(stage, (performance.now() - queued) / 1000);
        // A call started ahead (detection runs one frame ahead) must not run a model once the pipeline has stopped.
        stop.signal.throwIfAborted();
        return clock.timeModelRun(run);
      });
    };
  const detectGate = gateFor('detect');
  // Descriptions name what the detector is fairly sure of, even below the confidence crops are embedded at.
  const describe = request.detection.enabled && deps.descriptions !== undefined;
  const descriptionMinScore = Math.min(DESCRIPTION_MIN_SCORE, request.detection.confidence);
  const detectMinScore = describe ? descriptionMinScore : request.detection.confidence;
  const embedGate = gateFor('embed');
  const isVideo = request.kind === 'video';
  const frameInterval = isVideo ? Math.floor(request.frameInterval) : 1;
  if (!(frameInterval >= 1))
    throw new RangeError(`frame interval must be a positive integer: ${request.frameInterval}`);

  // One controller stops the probe and every stage: the caller's abort, or the first stage to fail. Linked, not
  // listened to: the caller's signal may be a workload's, shared by every shard in flight.
  const stop = new AbortController();
  const unlinkCaller = request.signal && linkAbort(request.signal, stop);
  let videoInfo: VideoInfo | undefined;
  try {
    videoInfo = isVideo
      ? await probeVideo(request.localPath, { paths: deps.ffmpegPaths, signal: stop.signal })
      : undefined;
  } catch (error) {
    unlinkCaller?.();
    throw error;
  }
  const info = videoInfo ?? { fps: 0, totalFrames: 1, durationSeconds: 0 };
  const base: MediaMetadataBase = {
    bucketName: request.bucketName,
    videoId: request.videoId,
    filename: request.filename,
    mediaType: request.kind,
    frameInterval,
    fps: info.fps,
    totalFrames: info.totalFrames,
    durationSeconds: info.durationSeconds,
    tags: request.tags,
    uploadedAt: request.uploadedAt,
    videoUrl: request.videoUrl,
    runId,
    sourcePath: request.sourcePath,
    extra: request.extraMetadata,
  };

  const frames = new BoundedQueue<VideoFrame>(options.frameQueueDepth ?? DEFAULTS.frameQueueDepth);
  // Detection runs ahead of cropping: the next frame's preprocessing (a 512 px resample on this thread) overlaps with
  // the current model run instead of leaving the model idle. The run itself still waits for the gate.
  const detections = new BoundedQueue<{ frame: VideoFrame; found: Promise<Detection[]> }>(1);
  const items = new BoundedQueue<EmbedItem>(embedBatchSize);
  const records = new BoundedQueue<RecordGroup>(Math.max(2, Math.ceil((writeBatchSize * 2) / embedBatchSize)));
  const queues = [frames, detections, items, records];
  let failure: { error: unknown } | undefined;
  const failAll = (error: unknown) => {
    failure ??= { error };
    if (!stop.signal.aborted) stop.abort(error);
    for (const queue of queues) queue.fail(error);
  };
  stop.signal.addEventListener('abort', () => failAll(stop.signal.reason), { once: true });
  const stage = (run: () => Promise<void>, output?: BoundedQueue<unknown>) =>
    run().then(
      () => output?.close(),
      (error: unknown) => failAll(error),
    );

  const decodeSize = videoInfo && fitWithin(videoInfo, options.maxFrameSide ?? DEFAULTS.maxFrameSide);
  // Decoded px × sourceScale = source px (1 for images and for videos no larger than maxFrameSide).
  const sourceScale = videoInfo && decodeSize ? videoInfo.width / decodeSize.width : 1;

  let insertStarted = false;
  let framesExtracted = 0;
  let cropsDetected = 0;
  let itemsEmbedded = 0;
  let embeddingsStored = 0;
  const batches = new BatchLog();

  const decode = async () => {
    if (!isVideo) {
      const image = await clock.time('decode', () =>
        decodeImage(request.localPath, { ffmpeg: deps.ffmpegPaths?.ffmpeg }),
      );
      framesExtracted = 1;
      await frames.push({ frameId: 0, timestampSeconds: 0, image });
      return;
    }
    const source = extractFrames(request.localPath, {
      every: frameInterval,
      info: videoInfo,
      scale: decodeSize,
      paths: deps.ffmpegPaths,
      threads: options.decodeThreads ?? DEFAULTS.decodeThreads,
      niceness: options.decodeNiceness ?? DEFAULTS.decodeNiceness,
      aheadFrames: 2,
      signal: stop.signal,
    });
    try {
      for (;;) {
        const next = await clock.time('decode', () => source.next());
        if (next.done) return;
        framesExtracted++;
        await frames.push(next.value);
      }
    } finally {
      // Ends ffmpeg when this stage stops early (another stage failed while a frame was waiting for room).
      await source.return(undefined);
    }
  };

  const submit = async () => {
    for (let frame = await frames.take(); frame; frame = await frames.take()) {
      stop.signal.throwIfAborted();
      const image = frame.image;
      const found = request.detection.enabled
        ? clock.time('detect', () => deps.detector.detect(image, detectMinScore, { gate: detectGate }))
        : Promise.resolve([]);
      // Awaited in order by `detect`; this only keeps a failure before then from counting as unhandled.
      found.catch(() => undefined);
      await detections.push({ frame, found });
    }
  };

  const detect = async () => {
    for (let next = await detections.take(); next; next = await detections.take()) {
      stop.signal.throwIfAborted();
      const { frame } = next;
      const image = frame.image;
      const found = await next.found;
      const described: FrameDescription | undefined = describe
        ? describeFrame(found, image.width, image.height, descriptionMinScore)
        : undefined;
      const subject = {
        kind: isVideo ? 'frame' : 'image',
        frameId: frame.frameId,
        timestampSeconds: frame.timestampSeconds,
        labels: request.detection.enabled ? frameLabels(found, descriptionMinScore) : undefined,
      } as const;
      await items.push({
        image,
        subject,
        description: described && { text: described.text, positions: described.positions },
      });
      let cropId = 0;
      for (const detection of found) {
        // The detector filters by minScore already; the check keeps the contract if an adapter does not.
        if (detection.score < request.detection.confidence) continue;
        cropsDetected++;
        await items.push({
          description: describe ? { text: describeObject(detection, image.width, image.height) } : undefined,
          image: cropDetection(image, detection),
          subject: {
            kind: 'crop',
            frameId: frame.frameId,
            timestampSeconds: frame.timestampSeconds,
            label: detection.label,
            bbox: toSourcePixels(detection.box, sourceScale),
            cropId: cropId++,
            score: detection.score,
          },
        });
      }
    }
  };

  const embed = async () => {
    for (;;) {
      const batch: EmbedItem[] = [];
      while (batch.length < embedBatchSize) {
        const item = await items.take();
        if (!item) break;
        batch.push(item);
      }
      if (batch.length === 0) return;
      const started = clock.elapsed();
      const vectors = await clock.time('embed', () =>
        deps.imageEmbedder.embed(
          batch.map((item) => item.image),
          { gate: embedGate },
        ),
      );
      if (vectors.length !== batch.length)
        throw new Error(`embedder returned ${vectors.length} vectors for ${batch.length} images`);
      const createdAt = new Date().toISOString();
      const out = batch.map((item, i): VectorRecord => ({
        id: recordId(request, runId, item.subject),
        vector: vectors[i],
        metadata: buildEmbeddingMetadata(base, item.subject, createdAt),
      }));
      const described = batch.filter((item) => item.description !== undefined);
      const textVectors = await embedDescriptions(described.map((item) => item.description!.text));
      const descriptionRecords = described.map((item, i): VectorRecord => {
        const { text, positions } = item.description!;
        const metadata = buildEmbeddingMetadata(base, item.subject, createdAt);
        metadata.description = text;
        if (positions) metadata.positions = positions;
        return { id: recordId(request, runId, item.subject, 'description'), vector: textVectors[i], metadata };
      });
      itemsEmbedded += batch.length;
      batches.add({
        index: batches.total,
        items: batch.length,
        crops: batch.filter((item) => item.subject.kind === 'crop').length,
        first_frame_id: batch[0].subject.frameId,
        last_frame_id: batch[batch.length - 1].subject.frameId,
        started_at_s: round3(started),
        embed_s: round3(clock.elapsed() - started),
      });
      await records.push({ images: out, descriptions: descriptionRecords });
    }
  };

  // Consecutive frames of a scene mostly share a description: each distinct text is embedded once per run.
  const descriptionVectors = new Map<string, Float32Array>();
  const embedDescriptions = async (texts: string[]): Promise<Float32Array[]> => {
    const missing = [...new Set(texts.filter((text) => !descriptionVectors.has(text)))];
    const fresh = new Map<string, Float32Array>();
    if (missing.length > 0) {
      const sink = deps.descriptions!;
      const vectors = await clock.time('embed', () => embedGate(() => sink.textEmbedder.embed(missing)));
      missing.forEach((text, i) => fresh.set(text, vectors[i]));
    }
    const result = texts.map((text) => (fresh.get(text) ?? descriptionVectors.get(text))!);
    if (descriptionVectors.size + fresh.size > DESCRIPTION_CACHE_ENTRIES) descriptionVectors.clear();
    for (const [text, vector] of fresh) descriptionVectors.set(text, vector);
    return result;
  };

  const write = async () => {
    let pending: VectorRecord[] = [];
    let pendingDescriptions: VectorRecord[] = [];
    const flush = async () => {
      if (pending.length === 0 && pendingDescriptions.length === 0) return;
      stop.signal.throwIfAborted();
      const chunk = pending;
      const descriptionChunk = pendingDescriptions;
      pending = [];
      pendingDescriptions = [];
      insertStarted = true;
      await clock.time('write', async () => {
        await deps.vectors.insert(chunk);
        if (descriptionChunk.length > 0) await deps.descriptions!.store.insert(descriptionChunk);
      });
      embeddingsStored += chunk.length;
      clock.count('writes');
    };
    for (let group = await records.take(); group; group = await records.take()) {
      pending.push(...group.images);
      pendingDescriptions.push(...group.descriptions);
      if (pending.length >= writeBatchSize) await flush();
    }
    await flush();
  };

  await Promise.all([
    stage(decode, frames),
    stage(submit, detections),
    stage(detect, items),
    stage(embed, records),
    stage(write),
  ]);
  unlinkCaller?.();

  if (failure) {
    const error = request.signal?.aborted ? request.signal.reason : failure.error;
    if (insertStarted) await rollback(deps, request, runId, error);
    throw error;
  }

  const result = clock.result({
    video: { fps: info.fps, totalFrames: info.totalFrames, durationSeconds: info.durationSeconds },
    framesExtracted,
    cropsDetected,
    itemsAfterDetection: itemsEmbedded,
    embeddingsStored,
    embedBatchSize,
    writeBatchSize,
    peakQueue: { frames: frames.peak, items: items.peak, records: records.peak },
    batches,
  });
  deps.logger.info('media embedded', {
    bucket_name: request.bucketName,
    video_id: request.videoId,
    frames: framesExtracted,
    crops: cropsDetected,
    embeddings: embeddingsStored,
    wall_s: result.stages.wall_s,
  });
  return result;
}

/** The size of `size` scaled down (aspect kept) so that neither side exceeds `maxSide`. */
function fitWithin(size: { width: number; height: number }, maxSide: number): { width: number; height: number } {
  const scale = Math.min(1, maxSide / Math.max(size.width, size.height));
  return {
    width: Math.max(1, Math.round(size.width * scale)),
    height: Math.max(1, Math.round(size.height * scale)),
  };
}

function toSourcePixels(box: [number, number, number, number], scale: number): [number, number, number, number] {
  return scale === 1 ? box : [box[0] * scale, box[1] * scale, box[2] * scale, box[3] * scale];
}

function recordId(request: EmbedMediaRequest, runId: string, subject: EmbeddingSubject, store?: 'description'): string {
  const crop = subject.kind === 'crop' ? subject.cropId : -1;
  const parts = [request.bucketName, request.videoId, runId, subject.kind, subject.frameId, crop];
  return embeddingRecordId(store ? [...parts, store] : parts);
}

/** Distinct classes detected at `minScore` or above, most frequent first. */
function frameLabels(found: Detection[], minScore: number): string[] {
  const counts = new Map<string, number>();
  for (const d of found) if (d.score >= minScore) counts.set(d.label, (counts.get(d.label) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([label]) => label);
}

async function rollback(
  deps: EmbedMediaDeps,
  request: EmbedMediaRequest,
  runId: string,
  cause: unknown,
): Promise<void> {
  const filter = { equals: { bucket_name: request.bucketName, video_id: request.videoId, run_id: runId } };
  try {
    const deleted = await deps.vectors.delete(filter);
    await deps.descriptions?.store.delete(filter);
    deps.logger.warn('embedding failed; removed the vectors this run had written', {
      bucket_name: request.bucketName,
      video_id: request.videoId,
      run_id: runId,
      deleted,
      reason: (cause as Error)?.message ?? String(cause),
    });
  } catch (error) {
    // The original failure is what the caller must see; the leftover is logged for an operator to clean up.
    deps.logger.warn('embedding failed and removing its partial vectors failed too', {
      bucket_name: request.bucketName,
      video_id: request.videoId,
      run_id: runId,
      reason: (cause as Error)?.message ?? String(cause),
      cleanup_error: (error as Error)?.message ?? String(error),
    });
  }
}
