import { IMAGE_DESCRIPTORS, type ImageDescriptorName } from '../../lib/inference/image-descriptor.js';
import { mediaTypeFromName } from '../../lib/media/index.js';
import type { MetadataValue, VectorFilter, VectorHit } from '../../lib/vectors/index.js';
import { NotFoundError } from '../errors.js';
import { isReservedMetadataKey } from '../pipeline/metadata.js';
import type { DataprepServices } from '../runtime/services.js';
import { descriptorFilter, restrictFilter } from '../search/image-spaces.js';

/** Frame interval and detection confidence a run gets when the stored records do not say theirs (the API defaults). */
const DEFAULT_FRAME_INTERVAL = 15;
const DEFAULT_DETECTION_CONFIDENCE = 0.85;
/** Stale records first read to find the next videos to convert (doubled while they all belong to failed videos). */
const ROUND = 500;
/** Crop records read to recover a video's detection confidence. */
const CROPS_READ = 1000;

/** One video of the archive. */
export interface VideoRef {
  bucketName: string;
  videoId: string;
}

/** What a re-embed did: videos converted, videos that failed (their old vectors untouched), stale records left. */
export interface ReembedReport {
  descriptor: ImageDescriptorName;
  converted: VideoRef[];
  failed: Array<VideoRef & { error: string }>;
  /** Image records still in another descriptor's space afterwards (0 when the archive is in one space). */
  remaining: number;
}

/** Options of reembedArchive. */
export interface ReembedOptions {
  /** Only this bucket's media (default: every bucket). */
  bucketName?: string;
  /** Stops between videos; the video in progress is abandoned and keeps its old vectors. */
  signal?: AbortSignal;
  /** Called after each video, converted or failed. */
  onVideo?: (video: VideoRef, outcome: { error?: string }) => void;
  /** Stale records first read per round (default 500). */
  round?: number;
}

/**
 * Brings every image vector of the archive into the service's descriptor space (`MM_DATAPREP_IMAGE_DESCRIPTOR`):
 * each video holding vectors of another descriptor is processed again through `MediaProcessing.process`, the
 * replace-on-success path, so its old vectors stay searchable until its new set is complete and a failure leaves
 * them as they were. The run's settings come from the video's stored records (frame interval, tags, detection on or
 * off, user metadata); the detection confidence is the lowest crop score stored (the same model finds the same
 * crops at or above it), 0.85 without crops. Search meanwhile embeds image queries in both spaces (search/image-spaces.ts).
 */
export async function reembedArchive(services: DataprepServices, options: ReembedOptions = {}): Promise<ReembedReport> {
  const descriptor = services.config.imageDescriptor;
  const scope: VectorFilter = options.bucketName ? { equals: { bucket_name: options.bucketName } } : {};
  const stale = IMAGE_DESCRIPTORS.filter((name) => name !== descriptor).map((name) =>
    restrictFilter(scope, descriptorFilter(name)),
  );
  const probe = probeVector(services.models.imageEmbedder.dimension);
  const report: ReembedReport = { descriptor, converted: [], failed: [], remaining: 0 };
  const attempted = new Set<string>();
  let limit = options.round ?? ROUND;
  for (;;) {
    options.signal?.throwIfAborted();
    const pages = await Promise.all(stale.map((f) => services.vectorStore.search(probe, limit, f)));
    const hits = pages.flat().filter((hit) => !attempted.has(videoKey(hit)));
    const videos = new Map(hits.map((hit) => [videoKey(hit), hit]));
    if (videos.size === 0) {
      if (pages.every((page) => page.length < limit)) break;
      // Failed videos stay stale, and one may hold more records than a page: read past them.
      limit *= 2;
      continue;
    }
    for (const [key, hit] of videos) {
      options.signal?.throwIfAborted();
      attempted.add(key);
      const video = { bucketName: String(hit.metadata.bucket_name), videoId: String(hit.metadata.video_id) };
      try {
        await reembedVideo(services, video, probe, options.signal);
        report.converted.push(video);
        options.onVideo?.(video, {});
      } catch (error) {
        if (options.signal?.aborted) throw error;
        const message = (error as Error)?.message ?? String(error);
        report.failed.push({ ...video, error: message });
        options.onVideo?.(video, { error: message });
      }
    }
  }
  const counts = await Promise.all(stale.map((f) => services.vectorStore.count(f)));
  report.remaining = counts.reduce((a, b) => a + b, 0);
  return report;
}

/** Processes one stored video again with the settings its records were made with. */
async function reembedVideo(
  services: DataprepServices,
  video: VideoRef,
  probe: Float32Array,
  signal?: AbortSignal,
): Promise<void> {
  const media = await services.catalogue.find(video.bucketName, video.videoId);
  if (!media) {
    const referenced = await services.references.findLive(video.bucketName, video.videoId);
    throw new NotFoundError(
      referenced
        ? 'Referenced media (store_copy=false) are not re-embedded: ingest the file again'
        : `No media stored for video ${video.videoId} of bucket ${video.bucketName}`,
    );
  }
  const type = mediaTypeFromName(media.filename);
  if (!type) throw new NotFoundError(`Stored file ${media.filename} is not a supported media type`);
  const ofVideo = { equals: { bucket_name: video.bucketName, video_id: video.videoId } };
  const [[frame], crops] = await Promise.all([
    services.vectorStore.search(probe, 1, { ...ofVideo, in: { kind: ['frame', 'image'] } }),
    services.vectorStore.search(probe, CROPS_READ, { ...ofVideo, in: { kind: ['crop'] } }),
  ]);
  const stored = frame?.metadata ?? crops[0]?.metadata ?? {};
  const cropScores = crops.map((crop) => crop.metadata.score).filter((s): s is number => typeof s === 'number');
  await services.processing.process({
    source: `${services.basePath}/reembed`,
    requestId: `reembed/${video.bucketName}/${video.videoId}`,
    media,
    kind: type.kind,
    options: {
      frameInterval: positiveInteger(stored.frame_interval) ?? DEFAULT_FRAME_INTERVAL,
      // Frames and images carry `labels` exactly when detection ran on them.
      detectionEnabled: Array.isArray(stored.labels) || cropScores.length > 0,
      detectionConfidence: cropScores.length > 0 ? Math.min(...cropScores) : DEFAULT_DETECTION_CONFIDENCE,
      tags: Array.isArray(stored.tags) ? stored.tags.map(String) : [],
    },
    ownsStoredMedia: false,
    enforceDuplicatePolicy: false,
    metadata: userMetadata(stored),
    sourcePath: typeof stored.source_path === 'string' ? stored.source_path : undefined,
    signal,
  });
}

/** The keys of a stored record that are user metadata (not written by dataprep itself). */
function userMetadata(metadata: Record<string, MetadataValue>): Record<string, MetadataValue> {
  return Object.fromEntries(Object.entries(metadata).filter(([key]) => !isReservedMetadataKey(key)));
}

function positiveInteger(value: MetadataValue | undefined): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : undefined;
}

function videoKey(hit: VectorHit): string {
  return JSON.stringify([hit.metadata.bucket_name, hit.metadata.video_id]);
}

/** A unit vector that any record is at some finite distance from: search with it lists records under a filter. */
function probeVector(dimension: number): Float32Array {
  return new Float32Array(dimension).fill(1 / Math.sqrt(dimension));
}
