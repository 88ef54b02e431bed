import path from 'node:path';
import type { Counter } from 'prom-client';
import type { ServiceControlPlane } from '../../../operator/ports/index.js';
import type { LoadedModels } from '../../lib/inference/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { ObjectStore } from '../../lib/storage/index.js';
import type { VectorStore } from '../../lib/vectors/index.js';
import type { DataprepConfig } from '../config.js';
import { FrameService } from '../frames/frame-service.js';
import type { ImageSourcePolicy } from '../ingest/image-source.js';
import { MediaProcessing } from '../ingest/processing.js';
import type { TelemetryLog } from '../ingest/telemetry.js';
import { IngestRoot } from '../ingest-root/ingest-root.js';
import { IngestJobs } from '../jobs/ingest-jobs.js';
import { MediaCatalogue } from '../media/catalogue.js';
import { ContentMarkers } from '../media/content-markers.js';
import { ReferencedMedia } from '../media/referenced-media.js';
import type { EmbedMedia } from '../pipeline/embedding-port.js';
import { MediaSearch } from '../search/index.js';
import { createUploadAbortCounter } from '../uploads/upload-metrics.js';

/** Path prefix of every dataprep endpoint. */
export const DATAPREP_BASE_PATH = '/v1/dataprep';

const MB = 1024 * 1024;

/** The contract's fixed limits; URL bounds come from configuration. */
function defaultLimits(deps: Pick<DataprepDeps, 'config'>): DataprepLimits {
  return {
    uploadMaxBytes: 500 * MB,
    ingestMaxBytes: 50 * MB,
    urlTimeoutMs: deps.config.urlTimeoutMs,
    urlMaxRedirects: deps.config.urlMaxRedirects,
  };
}

/** Size and time bounds of the HTTP surface; tests shrink them, production uses the contract's values. */
export interface DataprepLimits {
  /** Largest upload (contract: 500 MB). */
  uploadMaxBytes: number;
  /** Largest downloaded or decoded ingest image (contract: 50 MB). */
  ingestMaxBytes: number;
  urlTimeoutMs: number;
  urlMaxRedirects: number;
}

/** The models the service uses, as loadModels returns them. */
export type DataprepModels = Pick<LoadedModels, 'imageEmbedder' | 'textEmbedder' | 'detector' | 'status'>;

/** What createApp needs; main.ts builds the real ones, tests may pass their own. */
export interface DataprepDeps {
  config: DataprepConfig;
  logger: Logger;
  objectStore: ObjectStore;
  /** Image (frame and crop) embeddings. */
  vectorStore: VectorStore;
  /** Summary embeddings: the text embedder has its own dimension, so its own table/collection. */
  textVectorStore: VectorStore;
  /** Frame and object descriptions (text embedder's dimension), written by the pipeline, read by search. */
  descriptionStore: VectorStore;
  models: DataprepModels;
  embedMedia: EmbedMedia;
  telemetry: TelemetryLog;
  /**
   * Where the asynchronous operations go: IngestJobs are created and read there (never run by the service). Every
   * process passes one; apps built without it (tests of the synchronous endpoints) answer the batch endpoints 500.
   */
  controlPlane?: ServiceControlPlane;
  limits?: Partial<DataprepLimits>;
  /** Where local copies of media are kept while they are processed; default `<dataDir>/tmp`. */
  tempDir?: string;
}

/** Everything the route handlers and the ingest worker share (built once per process by buildServices). */
export interface DataprepServices extends Omit<DataprepDeps, 'limits' | 'tempDir'> {
  limits: DataprepLimits;
  tempDir: string;
  catalogue: MediaCatalogue;
  markers: ContentMarkers;
  processing: MediaProcessing;
  /** Batch jobs (IngestJobs in the control plane). */
  jobs: IngestJobs;
  /** Media referenced in place on the ingest mount (directory ingest with store_copy=false). */
  references: ReferencedMedia;
  /** The ingest data root, when MM_DATAPREP_INGEST_DATA_ROOT is set. */
  ingestRoot?: IngestRoot;
  basePath: string;
  /** Uploads stopped by their request signal (upload-metrics.ts). */
  uploadsAborted: Counter<'reason'>;
  /** How ingest images are decoded and downloaded (POST /media/ingest and the image batch's URL items). */
  imageSources: ImageSourcePolicy;
  /** POST /search: text, image and frame-alike queries over the stored embeddings. */
  search: MediaSearch;
  /** GET /media/frame's renderer: its cache, process slots and counters. */
  frames: FrameService;
}

/** Builds what the route handlers and the ingest worker share from the injected dependencies. */
export function buildServices(deps: DataprepDeps): DataprepServices {
  const limits = { ...defaultLimits(deps), ...deps.limits };
  const tempDir = deps.tempDir ?? path.join(deps.config.dataDir, 'tmp');
  const catalogue = new MediaCatalogue(deps.objectStore);
  const markers = new ContentMarkers(deps.objectStore, deps.config.markerBucket, {
    claimTimeoutMs: deps.config.duplicateClaimTimeoutMs,
  });
  const { ingestDataRoot, ingestDataRootHost, markerBucket } = deps.config;
  const ingestRoot = ingestDataRoot ? new IngestRoot(ingestDataRoot, ingestDataRootHost) : undefined;
  const references = new ReferencedMedia(deps.objectStore, markerBucket, ingestRoot);
  const processing = new MediaProcessing({
    objectStore: deps.objectStore,
    vectorStore: deps.vectorStore,
    descriptionStore: deps.descriptionStore,
    catalogue,
    markers,
    references,
    telemetry: deps.telemetry,
    embedMedia: deps.embedMedia,
    logger: deps.logger,
    allowDuplicateUploads: deps.config.allowDuplicateUploads,
    maxImagePixels: deps.config.imageMaxPixels,
    tempDir,
    downloadPath: `${DATAPREP_BASE_PATH}/media/download`,
  });
  const { limits: _limits, tempDir: _tempDir, ...rest } = deps;
  const uploadsAborted = createUploadAbortCounter();
  const jobs = new IngestJobs(deps.controlPlane);
  return {
    ...rest,
    limits,
    tempDir,
    catalogue,
    markers,
    processing,
    jobs,
    references,
    ingestRoot,
    basePath: DATAPREP_BASE_PATH,
    uploadsAborted,
    imageSources: {
      limits: { maxBytes: limits.ingestMaxBytes, timeoutMs: limits.urlTimeoutMs, maxRedirects: limits.urlMaxRedirects },
      allow: deps.config.imageUrlAllow,
    },
    frames: new FrameService(deps.config.frames),
    search: new MediaSearch({
      imageStore: deps.vectorStore,
      descriptionStore: deps.descriptionStore,
      summaryStore: deps.textVectorStore,
      imageEmbedder: deps.models.imageEmbedder,
      imageDescriptor: deps.config.imageDescriptor,
      textEmbedder: deps.models.textEmbedder,
      basePath: DATAPREP_BASE_PATH,
    }),
  };
}
