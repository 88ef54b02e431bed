import { randomUUID } from 'node:crypto';
import { KeyedQueue } from '../../lib/keyed-queue/index.js';
import type { Logger } from '../../lib/log/index.js';
import {
  assertImagePixels,
  FrameDecodeError,
  ImageTooLargeError,
  UndecodableImageError,
  VideoProbeError,
  type MediaKind,
} from '../../lib/media/index.js';
import { InvalidKeyError, type ObjectStore } from '../../lib/storage/index.js';
import type { MetadataValue, VectorStore } from '../../lib/vectors/index.js';
import type { MediaCatalogue, StoredMedia } from '../media/catalogue.js';
import type { ContentMarkers } from '../media/content-markers.js';
import { claimContent, liveContentOwner } from '../media/content-owners.js';
import type { EmbedMedia } from '../pipeline/embedding-port.js';
import type { EmbedMediaResult } from '../pipeline/index.js';
import type { ReferencedMedia } from '../media/referenced-media.js';
import {
  DataprepError,
  DuplicateContentError,
  imageTooLargeMessage,
  InvalidInputError,
  TooLargeError,
} from '../errors.js';
import type { TelemetryLog, TelemetryRecord } from './telemetry.js';
import { downloadToTempMedia, type TempMedia } from '../media/temp-media.js';

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
  /** Apply the duplicate policy (DuplicateContentError) before embedding. */
  enforceDuplicatePolicy: boolean;
  /**
   * True when the video certainly has no embeddings from an earlier run (a job item that no attempt has started
   * before): the replace step, a vector-database delete whose cost grows with the table, is skipped. Default false.
   */
  noEarlierRuns?: boolean;
  /** User metadata for every embedding (directory ingest, control-plane issue); canonical keys are refused. */
  metadata?: Record<string, MetadataValue>;
  /** Origin path of media referenced in place (directory ingest with store_copy=false), recorded as `source_path`. */
  sourcePath?: string;
  signal?: AbortSignal;
}

/** What a successful processing run produced. */
export interface ProcessingOutcome {
  result: EmbedMediaResult;
  /** The run id its embeddings carry (metadata `run_id`). */
  runId: string;
  telemetry: TelemetryRecord;
  sha256?: string;
}

/** Dependencies of MediaProcessing. */
export interface MediaProcessingDeps {
  objectStore: ObjectStore;
  vectorStore: VectorStore;
  /** Descriptions of the same frames (search/): replaced and rolled back together with the vectors. */
  descriptionStore: VectorStore;
  catalogue: MediaCatalogue;
  markers: ContentMarkers;
  /** Media referenced in place: it owns content like stored media does. */
  references: ReferencedMedia;
  telemetry: TelemetryLog;
  embedMedia: EmbedMedia;
  logger: Logger;
  allowDuplicateUploads: boolean;
  /** Images stating more pixels in their header are refused (TooLargeError) before anything decodes them. */
  maxImagePixels: number;
  tempDir: string;
  /** URL path of the download endpoint, recorded with each embedding. */
  downloadPath: string;
}

const DECODE_FAILURES = [VideoProbeError, FrameDecodeError, UndecodableImageError];

/**
 * A failed run's error as the domain reports it: media that cannot be decoded and rejected keys are bad input, a
 * header stating too many pixels too large; backend failures and the unexpected stay as they are.
 */
function toDomainError(error: unknown, kind: MediaKind): unknown {
  if (error instanceof DataprepError) return error;
  if (error instanceof ImageTooLargeError) return new TooLargeError(imageTooLargeMessage(error));
  if (error instanceof InvalidKeyError) return new InvalidInputError(error.message);
  if (DECODE_FAILURES.some((type) => error instanceof type)) {
    return new InvalidInputError(`The ${kind === 'video' ? 'video' : 'image'} could not be decoded`);
  }
  return error;
}

/**
 * The shared core of every processing request (process, upload, ingest, and the batch ingest worker per item):
 * duplicate policy, pipeline run, content marker, telemetry, and rollback so a failure leaves no half state.
 *
 * Re-processing replaces on success: a run writes its embeddings beside the video's current ones, tagged with its
 * own `run_id`; only once the run is complete are the others (earlier runs, leftovers of crashed ones) deleted. A
 * failed or abandoned run removes only what it wrote, so the previous set stays searchable throughout. Runs of one
 * video in this process take turns; see the README for runs on several replicas.
 */
export class MediaProcessing {
  private readonly videos = new KeyedQueue<string>();

  constructor(private readonly deps: MediaProcessingDeps) {}

  /** Throws DuplicateContentError when duplicates are disallowed and another existing video owns `sha256` (a check: claims decide races). */
  async assertNotDuplicate(sha256: string, self: { bucket: string; videoId: string }): Promise<void> {
    if (this.deps.allowDuplicateUploads) return;
    // A marker whose video vanished (removed outside the API, a referenced file gone) no longer blocks anything.
    const owner = await liveContentOwner(this.deps, sha256);
    if (!owner || (owner.bucket_name === self.bucket && owner.video_id === self.videoId)) return;
    throw new DuplicateContentError(owner.bucket_name, owner.video_id);
  }

  /**
   * With duplicates disallowed, claims `sha256` for `media` atomically (one of racing runs wins): DuplicateContentError naming the
   * holder when another video has it; true when this run took it, and so must give it back if it fails.
   */
  private async claim(sha256: string, media: StoredMedia): Promise<boolean> {
    if (this.deps.allowDuplicateUploads) return false;
    const { won, owner } = await claimContent(this.deps, {
      sha256,
      bucket_name: media.bucket,
      video_id: media.videoId,
      filename: media.filename,
      created_at: new Date().toISOString(),
    });
    if (owner) throw new DuplicateContentError(owner.bucket_name, owner.video_id);
    return won;
  }

  /** Embeds one stored media item; on failure removes what this request created and throws the failure as a domain error where it is one. */
  process(input: ProcessingInput): Promise<ProcessingOutcome> {
    // Two runs of one video at once would each delete the other's set on completion.
    return this.videos.run(`${input.media.bucket}\u0000${input.media.videoId}`, () => this.run(input));
  }

  private async run(input: ProcessingInput): Promise<ProcessingOutcome> {
    const { media, options } = input;
    const requestedAt = new Date();
    const runId = randomUUID();
    let downloaded: TempMedia | undefined;
    let runComplete = false;
    /** Set once the earlier runs' embeddings are being deleted: the new set is then the only complete one. */
    let replacing = false;
    // The content hash this run claimed (duplicates disallowed): given back if the run fails.
    let claimed: string | undefined;
    try {
      let local = input.local;
      if (!local) {
        downloaded = await downloadToTempMedia(this.deps.objectStore, media.bucket, media.key, this.deps.tempDir);
        local = downloaded;
      }
      if (input.kind === 'image') await assertImagePixels(local.path, this.deps.maxImagePixels);
      if (input.enforceDuplicatePolicy && local.sha256 && (await this.claim(local.sha256, media))) {
        claimed = local.sha256;
      }
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
        runId,
        extraMetadata: input.metadata,
        sourcePath: input.sourcePath,
        videoUrl: `${this.deps.downloadPath}?${query.toString()}`,
        uploadedAt: media.lastModified.toISOString(),
        signal: input.signal,
      });
      runComplete = true;
      if (local.sha256) {
        await this.deps.markers.record({
          sha256: local.sha256,
          bucket_name: media.bucket,
          video_id: media.videoId,
          filename: media.filename,
          created_at: new Date().toISOString(),
        });
      }
      // The new set is complete: now, and only now, the previous one goes (a new video has none). From here a
      // failure keeps the new set: the previous one may be partly deleted already, and the next run removes the rest.
      if (!input.ownsStoredMedia && !input.noEarlierRuns) {
        replacing = true;
        const earlierRuns = {
          equals: { bucket_name: media.bucket, video_id: media.videoId },
          notEquals: { run_id: runId },
        };
        await this.deps.vectorStore.delete(earlierRuns);
        await this.deps.descriptionStore.delete(earlierRuns);
      }
      const telemetry = this.telemetryRecord(input, requestedAt, result);
      this.deps.telemetry.add(telemetry);
      return { result, runId, telemetry, sha256: local.sha256 };
    } catch (error) {
      await this.rollback(input, runId, runComplete && !replacing, claimed, error);
      throw toDomainError(error, input.kind);
    } finally {
      await downloaded?.remove();
    }
  }

  /**
   * Removes what a failed run created. The pipeline already removed a partial run's vectors itself; a complete run's
   * go here (a later step failed). Earlier runs' vectors are never touched.
   */
  private async rollback(
    input: ProcessingInput,
    runId: string,
    runComplete: boolean,
    claimed: string | undefined,
    cause: unknown,
  ): Promise<void> {
    const { media } = input;
    const steps: Array<[string, () => Promise<unknown>]> = [];
    if (claimed) {
      const self = { bucket_name: media.bucket, video_id: media.videoId };
      steps.push(['content claim', () => this.deps.markers.release(claimed, self)]);
    }
    if (runComplete) {
      const ofRun = { bucket_name: media.bucket, video_id: media.videoId, run_id: runId };
      steps.push(['vectors', () => this.deps.vectorStore.delete({ equals: ofRun })]);
      steps.push(['descriptions', () => this.deps.descriptionStore.delete({ equals: ofRun })]);
    }
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
          runId,
          error: (error as Error).message,
          cause: (cause as Error)?.message,
        });
      }
    }
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
