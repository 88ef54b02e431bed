import { HttpError } from '../lib/http/index.js';
import type { Logger } from '../lib/log/index.js';
import { FrameDecodeError, UndecodableImageError, VideoProbeError, type MediaKind } from '../lib/media/index.js';
import type { ObjectStore } from '../lib/storage/index.js';
import type { VectorStore } from '../lib/vectors/index.js';
import type { MediaCatalogue, StoredMedia } from './catalogue.js';
import type { ContentMarkers } from './content-markers.js';
import type { EmbedMedia } from './embedding-port.js';
import type { EmbedMediaResult } from './pipeline/index.js';
import { isBackendFailure, toHttpError } from './errors.js';
import type { TelemetryLog, TelemetryRecord } from './telemetry.js';
import { downloadToTempMedia, type TempMedia } from './temp-media.js';

/** Per-request processing options (validated at the edge). */
export interface ProcessingOptions {
  frameInterval: number;
  detectionEnabled: boolean;
  detectionConfidence: number;
  tags: string[];
}

/** One processing job: a stored media item and how to treat it. */
export interface ProcessingInput {
  /** Endpoint path recorded in telemetry. */
  source: string;
  requestId: string;
  media: StoredMedia;
  kind: MediaKind;
  options: ProcessingOptions;
  /** A local copy (with its hash) when the caller has one; otherwise the object is downloaded. */
  local?: TempMedia;
  /** True when this request stored the media: a failure then removes it again. */
  ownsStoredMedia: boolean;
  /** Apply the duplicate policy (409) before embedding. */
  enforceDuplicatePolicy: boolean;
  signal?: AbortSignal;
}

/** What a successful processing run produced. */
export interface ProcessingOutcome {
  result: EmbedMediaResult;
  telemetry: TelemetryRecord;
  sha256?: string;
}

/** Dependencies of MediaProcessing. */
export interface MediaProcessingDeps {
  objectStore: ObjectStore;
  vectorStore: VectorStore;
  catalogue: MediaCatalogue;
  markers: ContentMarkers;
  telemetry: TelemetryLog;
  embedMedia: EmbedMedia;
  logger: Logger;
  allowDuplicateUploads: boolean;
  tempDir: string;
  /** URL path of the download endpoint, recorded with each embedding. */
  downloadPath: string;
}

const DECODE_FAILURES = [VideoProbeError, FrameDecodeError, UndecodableImageError];

/** Message of the 409 answer: names the video that already holds the content. */
export function duplicateMessage(bucket: string, videoId: string): string {
  return `Identical content already exists as video_id ${videoId} in bucket ${bucket}`;
}

/**
 * The shared core of every processing request (process, upload, ingest; later the batch worker): duplicate policy,
 * pipeline run, content marker, telemetry, and rollback so a failure leaves no half state.
 */
export class MediaProcessing {
  constructor(private readonly deps: MediaProcessingDeps) {}

  /** Throws 409 when duplicates are disallowed and another existing video owns `sha256`. */
  async assertNotDuplicate(sha256: string, self: { bucket: string; videoId: string }): Promise<void> {
    if (this.deps.allowDuplicateUploads) return;
    const owner = await this.deps.markers.find(sha256);
    if (!owner || (owner.bucket_name === self.bucket && owner.video_id === self.videoId)) return;
    // A marker whose video vanished (removed outside the API) no longer blocks anything.
    const stillThere = await this.deps.catalogue.find(owner.bucket_name, owner.video_id);
    if (!stillThere) return;
    throw new HttpError(409, duplicateMessage(owner.bucket_name, owner.video_id));
  }

  /** Embeds one stored media item; on failure removes what this request created and throws an HttpError-able error. */
  async process(input: ProcessingInput): Promise<ProcessingOutcome> {
    const { media, options } = input;
    const requestedAt = new Date();
    let downloaded: TempMedia | undefined;
    try {
      let local = input.local;
      if (!local) {
        downloaded = await downloadToTempMedia(this.deps.objectStore, media.bucket, media.key, this.deps.tempDir);
        local = downloaded;
      }
      if (input.enforceDuplicatePolicy && local.sha256) {
        await this.assertNotDuplicate(local.sha256, { bucket: media.bucket, videoId: media.videoId });
      }
      // Re-processing a video replaces its embeddings instead of adding a second set.
      if (!input.ownsStoredMedia) await this.deleteVectors(media);
      const query = new URLSearchParams({ bucket_name: media.bucket, video_id: media.videoId });
      const result = await this.deps.embedMedia({
        localPath: local.path,
        kind: input.kind,
        bucketName: media.bucket,
        videoId: media.videoId,
        filename: media.filename,
        frameInterval: options.frameInterval,
        detection: { enabled: options.detectionEnabled, confidence: options.detectionConfidence },
        tags: options.tags,
        videoUrl: `${this.deps.downloadPath}?${query.toString()}`,
        uploadedAt: media.lastModified.toISOString(),
        signal: input.signal,
      });
      if (local.sha256) {
        await this.deps.markers.record({
          sha256: local.sha256,
          bucket_name: media.bucket,
          video_id: media.videoId,
          filename: media.filename,
          created_at: new Date().toISOString(),
        });
      }
      const telemetry = this.telemetryRecord(input, requestedAt, result);
      this.deps.telemetry.add(telemetry);
      return { result, telemetry, sha256: local.sha256 };
    } catch (error) {
      await this.rollback(input, error);
      throw this.toClientError(error, input.kind);
    } finally {
      await downloaded?.remove();
    }
  }

  /** Deletes every image embedding of one video. */
  deleteVectors(media: { bucket: string; videoId: string }): Promise<number> {
    return this.deps.vectorStore.delete({ equals: { bucket_name: media.bucket, video_id: media.videoId } });
  }

  private async rollback(input: ProcessingInput, cause: unknown): Promise<void> {
    const { media } = input;
    const steps: Array<[string, () => Promise<unknown>]> = [['vectors', () => this.deleteVectors(media)]];
    if (input.ownsStoredMedia) {
      steps.push(['stored media', () => this.deps.catalogue.removeVideo(media.bucket, media.videoId)]);
      steps.push(['content markers', () => this.deps.markers.removeVideo(media.bucket, media.videoId)]);
    }
    for (const [what, step] of steps) {
      try {
        await step();
      } catch (error) {
        this.deps.logger.error('rollback step failed', {
          requestId: input.requestId,
          step: what,
          bucket: media.bucket,
          videoId: media.videoId,
          error: (error as Error).message,
          cause: (cause as Error)?.message,
        });
      }
    }
  }

  private toClientError(error: unknown, kind: MediaKind): unknown {
    if (error instanceof HttpError || isBackendFailure(error)) return toHttpError(error);
    if (DECODE_FAILURES.some((type) => error instanceof type)) {
      return new HttpError(400, `The ${kind === 'video' ? 'video' : 'image'} could not be decoded`);
    }
    return error;
  }

  private telemetryRecord(input: ProcessingInput, requestedAt: Date, result: EmbedMediaResult): TelemetryRecord {
    const completedAt = new Date();
    const { media, options } = input;
    return {
      request_id: input.requestId,
      source: input.source,
      timestamps: {
        requested_at: requestedAt.toISOString(),
        completed_at: completedAt.toISOString(),
        wall_time_seconds: (completedAt.getTime() - requestedAt.getTime()) / 1000,
      },
      video: {
        bucket_name: media.bucket,
        video_id: media.videoId,
        filename: media.filename,
        frame_interval: options.frameInterval,
        fps: result.video.fps,
        total_frames: result.video.totalFrames,
        video_duration_seconds: result.video.durationSeconds,
        tags: options.tags,
      },
      config: {
        object_detection_enabled: options.detectionEnabled,
        detection_confidence: options.detectionConfidence,
      },
      counts: {
        stream_id: 0,
        frames_extracted: result.framesExtracted,
        items_after_detection: result.itemsAfterDetection,
        embeddings_stored: result.embeddingsStored,
      },
      pipeline_stats: { media_type: input.kind, ...result.pipelineStats },
      stage_duration: { ...result.stages },
      stage_throughput: { ...result.throughput },
      batches: result.batches,
    };
  }
}
