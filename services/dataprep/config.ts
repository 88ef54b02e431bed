import path from 'node:path';
import Joi from 'joi';
import { INGEST_MAX_ITEMS } from '../../operator/api/index.js';
import { CURRENT_IMAGE_DESCRIPTOR, IMAGE_DESCRIPTORS, type ImageDescriptorName } from '../lib/inference/index.js';
import { MAX_DECODABLE_PIXELS } from '../lib/media/index.js';
import type { ObjectStoreConfig } from '../lib/storage/index.js';
import {
  envBoolean,
  envHttpUrl,
  envPort,
  loadConfig,
  platformEnvSchema,
  toPlatformConfig,
} from '../lib/config/index.js';
import type { PlatformConfig, PlatformEnv, SettingsScope } from '../lib/config/index.js';
import { AllowList, envAllowList } from '../lib/outbound/index.js';
import { bucketName } from './media/bucket-name.js';

/** The environment as `dataprepEnvSchema` validates it (defaults applied). */
interface DataprepEnv extends PlatformEnv {
  ARGUS_MODEL_IMAGE_EMBEDDER?: string;
  ARGUS_MODEL_TEXT_EMBEDDER?: string;
  ARGUS_MODEL_DETECTOR?: string;
  MM_DATAPREP_HOST: string;
  MM_DATAPREP_HOST_PORT: number;
  MM_DATAPREP_ALLOW_DUPLICATE_UPLOADS: boolean;
  MM_DATAPREP_DUPLICATE_CLAIM_TIMEOUT_SECONDS: number;
  MM_DATAPREP_BATCH_MAX_ITEMS: number;
  MM_DATAPREP_TELEMETRY_MAX_RECORDS: number;
  MM_DATAPREP_INGEST_DATA_ROOT?: string;
  MM_DATAPREP_INGEST_DATA_ROOT_HOST?: string;
  MM_DATAPREP_DEFAULT_BUCKET: string;
  MM_DATAPREP_MARKER_BUCKET: string;
  MM_DATAPREP_DATA_DIR?: string;
  MM_DATAPREP_PRELOAD_MODELS: boolean;
  MM_DATAPREP_URL_TIMEOUT_SECONDS: number;
  MM_DATAPREP_URL_MAX_REDIRECTS: number;
  MM_DATAPREP_IMAGE_URL_ALLOW?: AllowList;
  MM_DATAPREP_IMAGE_MAX_PIXELS: number;
  MM_DATAPREP_IMAGE_DESCRIPTOR: ImageDescriptorName;
  MM_DATAPREP_FRAME_CONCURRENCY: number;
  MM_DATAPREP_FRAME_TIMEOUT_SECONDS: number;
  MM_DATAPREP_FRAME_CACHE_MB: number;
  MM_DATAPREP_FRAME_CACHE_ENTRIES: number;
  MM_DATAPREP_STORAGE_BACKEND: 'local' | 's3';
  MM_DATAPREP_S3_ENDPOINT?: string;
  MM_DATAPREP_S3_REGION: string;
  MM_DATAPREP_S3_ACCESS_KEY_ID?: string;
  MM_DATAPREP_S3_SECRET_ACCESS_KEY?: string;
  MM_DATAPREP_S3_SESSION_TOKEN?: string;
  MM_DATAPREP_S3_FORCE_PATH_STYLE: boolean;
  MM_DATAPREP_S3_CHECKSUM_MODE: 'when_supported' | 'when_required';
  MM_DATAPREP_S3_BUCKET_PREFIX: string;
  MM_DATAPREP_VECTORDB_BACKEND: 'lancedb' | 'weaviate';
  MM_DATAPREP_VECTORDB_TABLE: string;
  /** Required when MM_DATAPREP_VECTORDB_BACKEND is weaviate (the schema's `when`). */
  MM_DATAPREP_WEAVIATE_URL?: string;
  MM_DATAPREP_WEAVIATE_GRPC_URL?: string;
  MM_DATAPREP_WEAVIATE_API_KEY?: string;
  MM_DATAPREP_WEAVIATE_COLLECTION: string;
}

/** The keys the schema must declare: joi's typings tie a schema's kind to its value, and the allow list is parsed text. */
type DataprepEnvKeys = Omit<DataprepEnv, 'MM_DATAPREP_IMAGE_URL_ALLOW'> & { MM_DATAPREP_IMAGE_URL_ALLOW?: string };

/** Every environment variable the dataprep service reads, with its default; the README lists the same table. */
export const dataprepEnvSchema = Joi.object<DataprepEnv, true, DataprepEnvKeys>({
  ...platformEnvSchema,
  ARGUS_MODEL_IMAGE_EMBEDDER: Joi.string().description('Image embedding model (directory name or absolute path)'),
  ARGUS_MODEL_TEXT_EMBEDDER: Joi.string().description('Text embedding model (directory name or absolute path)'),
  ARGUS_MODEL_DETECTOR: Joi.string().description('Object detection model (directory name or absolute path)'),

  MM_DATAPREP_HOST: Joi.string().default('127.0.0.1'),
  MM_DATAPREP_HOST_PORT: envPort().default(6007),
  MM_DATAPREP_ALLOW_DUPLICATE_UPLOADS: envBoolean().default(false),
  // Longer than the longest processing run: an unfinished claim older than this was left by a crash (README).
  MM_DATAPREP_DUPLICATE_CLAIM_TIMEOUT_SECONDS: Joi.number().integer().min(1).max(604_800).default(3600),
  // Used by the batch endpoints and their IngestJobs (control-plane issue), like the two ingest roots below.
  // A batch is one IngestJob, whose items and results must fit one API object (etcd bounds its size): the resource
  // API caps items at INGEST_MAX_ITEMS, and this setting may only lower that.
  MM_DATAPREP_BATCH_MAX_ITEMS: Joi.number().integer().min(1).max(INGEST_MAX_ITEMS).default(100),
  MM_DATAPREP_TELEMETRY_MAX_RECORDS: Joi.number().integer().min(1).max(100_000).default(1000),
  // Directory ingest and referenced media (store_copy=false) must lie below it; the host path expresses source_path.
  MM_DATAPREP_INGEST_DATA_ROOT: Joi.string(),
  MM_DATAPREP_INGEST_DATA_ROOT_HOST: Joi.string(),
  MM_DATAPREP_DEFAULT_BUCKET: bucketName().default('argus-media'),
  MM_DATAPREP_MARKER_BUCKET: bucketName().default('argus-dataprep-markers'),
  MM_DATAPREP_DATA_DIR: Joi.string(),
  MM_DATAPREP_PRELOAD_MODELS: envBoolean().default(true),
  MM_DATAPREP_URL_TIMEOUT_SECONDS: Joi.number().min(1).max(600).default(30),
  MM_DATAPREP_URL_MAX_REDIRECTS: Joi.number().integer().min(0).max(20).default(5),
  MM_DATAPREP_IMAGE_URL_ALLOW: envAllowList(),
  // 50 MP decodes to 150 MB of RGB; the header is checked before a pixel is decoded (pixel bombs).
  MM_DATAPREP_IMAGE_MAX_PIXELS: Joi.number().integer().min(1).max(MAX_DECODABLE_PIXELS).default(50_000_000),
  MM_DATAPREP_IMAGE_DESCRIPTOR: Joi.string()
    .valid(...IMAGE_DESCRIPTORS)
    .default(CURRENT_IMAGE_DESCRIPTOR)
    .description('How images become stored vectors (image search); re-embed the archive after changing it'),
  // GET /media/frame: renders (ffmpeg, ffprobe, resizes) at once, their time limit, and the frame cache's bounds.
  MM_DATAPREP_FRAME_CONCURRENCY: Joi.number().integer().min(1).max(64).default(2),
  MM_DATAPREP_FRAME_TIMEOUT_SECONDS: Joi.number().min(0.1).max(600).default(20),
  MM_DATAPREP_FRAME_CACHE_MB: Joi.number().min(1).max(65_536).default(64),
  MM_DATAPREP_FRAME_CACHE_ENTRIES: Joi.number().integer().min(1).max(1_000_000).default(2000),

  MM_DATAPREP_STORAGE_BACKEND: Joi.string().valid('local', 's3').default('local'),
  MM_DATAPREP_S3_ENDPOINT: envHttpUrl(),
  MM_DATAPREP_S3_REGION: Joi.string().default('us-east-1'),
  MM_DATAPREP_S3_ACCESS_KEY_ID: Joi.string(),
  MM_DATAPREP_S3_SECRET_ACCESS_KEY: Joi.string(),
  MM_DATAPREP_S3_SESSION_TOKEN: Joi.string(),
  MM_DATAPREP_S3_FORCE_PATH_STYLE: envBoolean().default(false),
  MM_DATAPREP_S3_CHECKSUM_MODE: Joi.string().valid('when_supported', 'when_required').default('when_supported'),
  MM_DATAPREP_S3_BUCKET_PREFIX: Joi.string().allow('').default(''),

  MM_DATAPREP_VECTORDB_BACKEND: Joi.string().valid('lancedb', 'weaviate').default('lancedb'),
  MM_DATAPREP_VECTORDB_TABLE: Joi.string()
    .pattern(/^[A-Za-z][A-Za-z0-9_]{0,62}$/)
    .default('argus_media'),
  MM_DATAPREP_WEAVIATE_URL: envHttpUrl(),
  MM_DATAPREP_WEAVIATE_GRPC_URL: envHttpUrl(),
  MM_DATAPREP_WEAVIATE_API_KEY: Joi.string(),
  MM_DATAPREP_WEAVIATE_COLLECTION: Joi.string()
    .pattern(/^[A-Z][A-Za-z0-9_]{0,62}$/)
    .default('ArgusMedia'),
})
  .when(Joi.object({ MM_DATAPREP_VECTORDB_BACKEND: Joi.valid('weaviate').required() }).unknown(), {
    then: Joi.object({ MM_DATAPREP_WEAVIATE_URL: Joi.required() }),
  })
  .and('MM_DATAPREP_S3_ACCESS_KEY_ID', 'MM_DATAPREP_S3_SECRET_ACCESS_KEY')
  .with('MM_DATAPREP_S3_SESSION_TOKEN', ['MM_DATAPREP_S3_ACCESS_KEY_ID'])
  .with('MM_DATAPREP_INGEST_DATA_ROOT_HOST', ['MM_DATAPREP_INGEST_DATA_ROOT']);

/** What dataprep reads from the environment; MM_DATAPREP_* is its own. */
export const dataprepSettings: SettingsScope = { schema: dataprepEnvSchema, prefixes: ['MM_DATAPREP_'] };

/** Where media is stored. */
export type DataprepStorageConfig = ObjectStoreConfig;

/** Where embeddings are stored; summaries use a second table/collection named in `textTable`. */
export type DataprepVectorConfig =
  | { backend: 'lancedb'; dir: string; table: string; textTable: string }
  | {
      backend: 'weaviate';
      url: string;
      grpcUrl?: string;
      apiKey?: string;
      collection: string;
      textCollection: string;
    };

/** The model roles dataprep loads (never the pose estimator). */
export const DATAPREP_MODEL_ROLES = ['imageEmbedder', 'textEmbedder', 'detector'] as const;

/** Bounds of the frame endpoint (MM_DATAPREP_FRAME_*). */
export interface FrameLimits {
  /** ffmpeg, ffprobe and image resizes running at once. */
  concurrency: number;
  /** From a request's first wait for a slot to its JPEG; past it ffmpeg is killed (504). */
  timeoutMs: number;
  cacheBytes: number;
  cacheEntries: number;
}

/** The validated configuration of the dataprep service. */
export interface DataprepConfig {
  platform: PlatformConfig;
  host: string;
  port: number;
  allowDuplicateUploads: boolean;
  /** A duplicate-policy claim still unfinished after this long may be taken over (its run crashed). */
  duplicateClaimTimeoutMs: number;
  batchMaxItems: number;
  telemetryMaxRecords: number;
  ingestDataRoot?: string;
  ingestDataRootHost?: string;
  defaultBucket: string;
  /** Reserved bucket of the content markers (duplicate policy); refused as a media bucket. */
  markerBucket: string;
  /** State of this service under the data dir: local media, LanceDB tables, telemetry. */
  dataDir: string;
  preloadModels: boolean;
  urlTimeoutMs: number;
  urlMaxRedirects: number;
  /** Non-public addresses and host names `image_url` may reach (MM_DATAPREP_IMAGE_URL_ALLOW); public ones always. */
  imageUrlAllow: AllowList;
  /** Images whose header states more pixels are refused (413) before decoding. */
  imageMaxPixels: number;
  /** The descriptor new image vectors are written and image queries are embedded with (lib/inference). */
  imageDescriptor: ImageDescriptorName;
  /** Bounds of GET /media/frame (MM_DATAPREP_FRAME_*). */
  frames: FrameLimits;
  storage: DataprepStorageConfig;
  vectors: DataprepVectorConfig;
  /** The roles dataprep loads and the model configured for each. */
  models: {
    roles: typeof DATAPREP_MODEL_ROLES;
    imageEmbedder?: string;
    textEmbedder?: string;
    detector?: string;
  };
}

/**
 * Reads and validates the dataprep settings from `env` (the only place the service reads the environment).
 * Unknown MM_DATAPREP_* variables and every invalid value are reported together in one ConfigError.
 */
export function loadDataprepConfig(env: NodeJS.ProcessEnv): DataprepConfig {
  const v = loadConfig('dataprep', dataprepEnvSchema, env, dataprepSettings.prefixes);
  const platform = toPlatformConfig(v);
  const dataDir = path.resolve(v.MM_DATAPREP_DATA_DIR ?? path.join(platform.dataDir, 'dataprep'));
  const storage: DataprepStorageConfig =
    v.MM_DATAPREP_STORAGE_BACKEND === 's3'
      ? {
          backend: 's3',
          endpoint: v.MM_DATAPREP_S3_ENDPOINT,
          region: v.MM_DATAPREP_S3_REGION,
          accessKeyId: v.MM_DATAPREP_S3_ACCESS_KEY_ID,
          secretAccessKey: v.MM_DATAPREP_S3_SECRET_ACCESS_KEY,
          sessionToken: v.MM_DATAPREP_S3_SESSION_TOKEN,
          forcePathStyle: v.MM_DATAPREP_S3_FORCE_PATH_STYLE,
          checksumWhenRequired: v.MM_DATAPREP_S3_CHECKSUM_MODE === 'when_required',
          bucketPrefix: v.MM_DATAPREP_S3_BUCKET_PREFIX || undefined,
        }
      : { backend: 'local', root: path.join(dataDir, 'media') };
  const vectors: DataprepVectorConfig =
    v.MM_DATAPREP_VECTORDB_BACKEND === 'weaviate'
      ? {
          backend: 'weaviate',
          // Present: the schema requires it for weaviate.
          url: v.MM_DATAPREP_WEAVIATE_URL!,
          grpcUrl: v.MM_DATAPREP_WEAVIATE_GRPC_URL,
          apiKey: v.MM_DATAPREP_WEAVIATE_API_KEY,
          collection: v.MM_DATAPREP_WEAVIATE_COLLECTION,
          textCollection: `${v.MM_DATAPREP_WEAVIATE_COLLECTION}Text`,
        }
      : {
          backend: 'lancedb',
          dir: path.join(dataDir, 'vectors'),
          table: v.MM_DATAPREP_VECTORDB_TABLE,
          textTable: `${v.MM_DATAPREP_VECTORDB_TABLE}_text`,
        };
  return {
    platform,
    host: v.MM_DATAPREP_HOST,
    port: v.MM_DATAPREP_HOST_PORT,
    allowDuplicateUploads: v.MM_DATAPREP_ALLOW_DUPLICATE_UPLOADS,
    duplicateClaimTimeoutMs: v.MM_DATAPREP_DUPLICATE_CLAIM_TIMEOUT_SECONDS * 1000,
    batchMaxItems: v.MM_DATAPREP_BATCH_MAX_ITEMS,
    telemetryMaxRecords: v.MM_DATAPREP_TELEMETRY_MAX_RECORDS,
    ingestDataRoot: v.MM_DATAPREP_INGEST_DATA_ROOT && path.resolve(v.MM_DATAPREP_INGEST_DATA_ROOT),
    ingestDataRootHost: v.MM_DATAPREP_INGEST_DATA_ROOT_HOST,
    defaultBucket: v.MM_DATAPREP_DEFAULT_BUCKET,
    markerBucket: v.MM_DATAPREP_MARKER_BUCKET,
    dataDir,
    preloadModels: v.MM_DATAPREP_PRELOAD_MODELS,
    urlTimeoutMs: Math.round(v.MM_DATAPREP_URL_TIMEOUT_SECONDS * 1000),
    urlMaxRedirects: v.MM_DATAPREP_URL_MAX_REDIRECTS,
    imageUrlAllow: v.MM_DATAPREP_IMAGE_URL_ALLOW ?? AllowList.EMPTY,
    imageMaxPixels: v.MM_DATAPREP_IMAGE_MAX_PIXELS,
    imageDescriptor: v.MM_DATAPREP_IMAGE_DESCRIPTOR,
    frames: {
      concurrency: v.MM_DATAPREP_FRAME_CONCURRENCY,
      timeoutMs: Math.round(v.MM_DATAPREP_FRAME_TIMEOUT_SECONDS * 1000),
      cacheBytes: Math.round(v.MM_DATAPREP_FRAME_CACHE_MB * 1024 * 1024),
      cacheEntries: v.MM_DATAPREP_FRAME_CACHE_ENTRIES,
    },
    storage,
    vectors,
    models: {
      roles: DATAPREP_MODEL_ROLES,
      imageEmbedder: v.ARGUS_MODEL_IMAGE_EMBEDDER,
      textEmbedder: v.ARGUS_MODEL_TEXT_EMBEDDER,
      detector: v.ARGUS_MODEL_DETECTOR,
    },
  };
}
