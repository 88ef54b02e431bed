import type { LoadedModels } from '../lib/inference/index.js';
import type { Logger } from '../lib/log/index.js';
import type { Counter } from 'prom-client';
import type { ServiceControlPlane } from '../../operator/ports/index.js';
import type { ObjectStore } from '../lib/storage/index.js';
import type { VectorStore } from '../lib/vectors/index.js';
import type { MediaCatalogue } from './catalogue.js';
import type { DataprepConfig } from './config.js';
import type { ContentMarkers } from './content-markers.js';
import type { FrameService } from './frames/frame-service.js';
import type { EmbedMedia } from './embedding-port.js';
import type { IngestRoot } from './ingest-root/ingest-root.js';
import type { IngestJobs } from './jobs/ingest-jobs.js';
import type { MediaProcessing } from './processing.js';
import type { ReferencedMedia } from './referenced-media.js';
import type { MediaSearch } from './search/index.js';
import type { TelemetryLog } from './telemetry.js';

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

/** Everything the route handlers share (built once by createApp). */
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
  /** POST /search: text, image and frame-alike queries over the stored embeddings. */
  search: MediaSearch;
  /** GET /media/frame's renderer: its cache, process slots and counters. */
  frames: FrameService;
}
