import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { linkAbort } from '../../lib/abort/index.js';
import type { RunGate } from '../../lib/inference/roles.js';
import { probeVideo, type VideoInfo } from '../../lib/media/probe-video.js';
import type { VideoFrame } from '../../lib/media/video-frames.js';
import { DESCRIPTION_MIN_SCORE } from '../../lib/scene-description/index.js';
import { BoundedQueue } from './bounded-queue.js';
import { decodeStage, fitWithin } from './decode-stage.js';
import { detectStage, submitStage, type PendingDetection } from './detect-stage.js';
import {
  pipelineSettings,
  type EmbedMediaDeps,
  type EmbedMediaOptions,
  type EmbedMediaRequest,
} from './embed-request.js';
import { embedStage } from './embed-stage.js';
import { assertNoReservedKeys } from './metadata.js';
import type { DetectionPlan, EmbedItem, PipelineRun, RecordGroup } from './pipeline-run.js';
import { BatchLog, PipelineClock, type EmbedMediaResult, type PipelineStats } from './pipeline-stats.js';
import { Semaphore } from './semaphore.js';
import { writeStage } from './write-stage.js';

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
  assertNoReservedKeys(request.extraMetadata);
  request.signal?.throwIfAborted();
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
  const run = planRun(deps, request, pipelineSettings(options), stop.signal, { frameInterval, videoInfo });
  const { failure, peakQueue } = await runStages(run, stop);
  unlinkCaller?.();
  if (failure) {
    const error = request.signal?.aborted ? request.signal.reason : failure.error;
    if (run.counts.insertStarted) await rollback(deps, request, run.runId, error);
    throw error;
  }
  return completed(run, peakQueue);
}

/** Everything a run's stages share, decided before the first frame: metadata, detection plan, model gates, sizes. */
function planRun(
  deps: EmbedMediaDeps,
  request: EmbedMediaRequest,
  settings: Required<EmbedMediaOptions>,
  signal: AbortSignal,
  media: { frameInterval: number; videoInfo?: VideoInfo },
): PipelineRun {
  const { frameInterval, videoInfo } = media;
  const runId = request.runId ?? randomUUID();
  const clock = new PipelineClock();
  // An image counts as one frame of no duration.
  const { fps, totalFrames, durationSeconds } = videoInfo ?? { fps: 0, totalFrames: 1, durationSeconds: 0 };
  const decodeSize = videoInfo && fitWithin(videoInfo, settings.maxFrameSide);
  return {
    deps,
    request,
    settings,
    runId,
    base: {
      bucketName: request.bucketName,
      videoId: request.videoId,
      filename: request.filename,
      mediaType: request.kind,
      frameInterval,
      fps,
      totalFrames,
      durationSeconds,
      tags: request.tags,
      uploadedAt: request.uploadedAt,
      videoUrl: request.videoUrl,
      runId,
      sourcePath: request.sourcePath,
      extra: request.extraMetadata,
    },
    isVideo: request.kind === 'video',
    frameInterval,
    videoInfo,
    video: { fps, totalFrames, durationSeconds },
    decodeSize,
    sourceScale: videoInfo && decodeSize ? videoInfo.width / decodeSize.width : 1,
    detection: detectionPlan(deps, request),
    clock,
    signal,
    gates: modelGates(settings.modelConcurrency, clock, signal),
    counts: { framesExtracted: 0, cropsDetected: 0, itemsEmbedded: 0, embeddingsStored: 0, insertStarted: false },
    batches: new BatchLog(),
  };
}

/** Which detections the run asks for and keeps. */
function detectionPlan(deps: EmbedMediaDeps, request: EmbedMediaRequest): DetectionPlan {
  const { enabled, confidence } = request.detection;
  // Descriptions name what the detector is fairly sure of, even below the confidence crops are embedded at.
  const describe = enabled && deps.descriptions !== undefined;
  const descriptionMinScore = Math.min(DESCRIPTION_MIN_SCORE, confidence);
  return {
    enabled,
    confidence,
    describe,
    descriptionMinScore,
    detectMinScore: describe ? descriptionMinScore : confidence,
  };
}

/** The gates of the detector's and the embedder's runs: `concurrency` model runs at once, timed by `clock`. */
function modelGates(concurrency: number, clock: PipelineClock, signal: AbortSignal): PipelineRun['gates'] {
  const models = new Semaphore(concurrency);
  // The model slot is taken for the session run alone; the time a call waits for it is not that stage's busy time.
  const gateFor =
    (stage: 'detect' | 'embed'): RunGate =>
    (run) => {
      const queued = performance.now();
      return models.run(() => {
        clock.excludeWait(stage, (performance.now() - queued) / 1000);
        // A call started ahead (detection runs one frame ahead) must not run a model once the pipeline has stopped.
        signal.throwIfAborted();
        return clock.timeModelRun(run);
      });
    };
  return { detect: gateFor('detect'), embed: gateFor('embed') };
}

/** The most entries each queue held at once, reported with the run's result. */
type PeakQueues = PipelineStats['peak_queue'];

/** The queues between the stages, bounded so that a slow stage holds back the ones before it. */
interface StageQueues {
  frames: BoundedQueue<VideoFrame>;
  detections: BoundedQueue<PendingDetection>;
  items: BoundedQueue<EmbedItem>;
  records: BoundedQueue<RecordGroup>;
}

/**
 * Runs the five stages concurrently over bounded queues until all are done; the first failure (or the caller's
 * abort) stops them all and is returned, undefined when the run completed.
 */
async function runStages(
  run: PipelineRun,
  stop: AbortController,
): Promise<{ failure?: { error: unknown }; peakQueue: PeakQueues }> {
  const { settings } = run;
  const queues: StageQueues = {
    frames: new BoundedQueue<VideoFrame>(settings.frameQueueDepth),
    // Detection runs one frame ahead of cropping (see submitStage).
    detections: new BoundedQueue<PendingDetection>(1),
    items: new BoundedQueue<EmbedItem>(settings.embedBatchSize),
    records: new BoundedQueue<RecordGroup>(
      Math.max(2, Math.ceil((settings.writeBatchSize * 2) / settings.embedBatchSize)),
    ),
  };
  let failure: { error: unknown } | undefined;
  const failAll = (error: unknown) => {
    failure ??= { error };
    if (!stop.signal.aborted) stop.abort(error);
    for (const queue of Object.values(queues)) queue.fail(error);
  };
  stop.signal.addEventListener('abort', () => failAll(stop.signal.reason), { once: true });
  const stage = (work: () => Promise<void>, output?: BoundedQueue<unknown>) =>
    work().then(
      () => output?.close(),
      (error: unknown) => failAll(error),
    );
  const { frames, detections, items, records } = queues;
  await Promise.all([
    stage(() => decodeStage(run, frames), frames),
    stage(() => submitStage(run, frames, detections), detections),
    stage(() => detectStage(run, detections, items), items),
    stage(() => embedStage(run, items, records), records),
    stage(() => writeStage(run, records)),
  ]);
  return { failure, peakQueue: { frames: frames.peak, items: items.peak, records: records.peak } };
}

/** The result of a completed run (its counts, stage times and batches), logged in one line. */
function completed(run: PipelineRun, peakQueue: PeakQueues): EmbedMediaResult {
  const { counts, settings, request } = run;
  const result = run.clock.result({
    video: run.video,
    framesExtracted: counts.framesExtracted,
    cropsDetected: counts.cropsDetected,
    itemsAfterDetection: counts.itemsEmbedded,
    embeddingsStored: counts.embeddingsStored,
    embedBatchSize: settings.embedBatchSize,
    writeBatchSize: settings.writeBatchSize,
    peakQueue,
    batches: run.batches,
  });
  run.deps.logger.info('media embedded', {
    bucket_name: request.bucketName,
    video_id: request.videoId,
    frames: counts.framesExtracted,
    crops: counts.cropsDetected,
    embeddings: counts.embeddingsStored,
    wall_s: result.stages.wall_s,
  });
  return result;
}

/** Deletes the vectors and descriptions a failed run wrote (its `run_id`); a failure to do so is only logged. */
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
