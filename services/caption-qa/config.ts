import path from 'node:path';
import Joi from 'joi';
import { IANAZone } from 'luxon';
import {
  envBoolean,
  envHttpUrl,
  envPort,
  loadConfig,
  platformEnvSchema,
  toPlatformConfig,
} from '../lib/config/index.js';
import type { PlatformConfig, PlatformEnv, SettingsScope } from '../lib/config/index.js';
import { llmConfigFrom, llmEnvSchema, type LlmConfig, type LlmEnv } from '../lib/llm/index.js';
import type { ObjectStoreConfig } from '../lib/storage/index.js';

/** Where the caption and kept-frame vectors live: two tables (LanceDB) or two collections (Weaviate). */
export type CaptionQaVectorConfig =
  | { backend: 'lancedb'; dir: string; captionTable: string; frameTable: string }
  | { backend: 'weaviate'; url: string; grpcUrl?: string; apiKey?: string; captionTable: string; frameTable: string };

/** How kept frames are bounded: per frame, in number and in age. */
export interface FrameRetention {
  /** Largest frame kept, in bytes (decoded from base64); a larger one is not kept, its caption still is. */
  maxBytes: number;
  /** Largest frame kept, in pixels (width × height). */
  maxPixels: number;
  /** Most frames kept; the oldest go first. 0: no count limit. */
  maxCount: number;
  /** Frames older than this are deleted, milliseconds. 0: no age limit. */
  maxAgeMs: number;
  /** Time between retention sweeps, milliseconds. */
  sweepIntervalMs: number;
}

/** How questions are answered from the stored captions. */
export interface RetrievalConfig {
  /** Captions given to the answer (after duplicates are collapsed). */
  topK: number;
  /** Captions less similar than this are dropped, unless a time or source filter selected them. */
  minScore: number;
  /** IANA zone of the time words in questions and of the times in answers. */
  timeZone: string;
  /** Half-width of the window around "at 14:05", milliseconds. */
  atToleranceMs: number;
  /** Consecutive captions of one source at least this similar (word overlap, 0–1) are one entry… */
  collapseSimilarity: number;
  /** …when at most this far apart in time, milliseconds. */
  collapseGapMs: number;
}

/** Validated settings of the caption-qa service. */
export interface CaptionQaConfig {
  platform: PlatformConfig;
  host: string;
  port: number;
  /** State of this service under the data dir: kept frames (local storage) and LanceDB tables. */
  dataDir: string;
  preloadModels: boolean;
  /** Largest JSON body, bytes (a base64 frame is 4/3 of its size). */
  maxBodyBytes: number;
  /** Longest caption text and question, characters. */
  maxCaptionChars: number;
  maxQuestionChars: number;
  retrieval: RetrievalConfig;
  /** Time between comment heartbeats while the answer's first token is awaited, milliseconds. */
  heartbeatMs: number;
  /** The OpenAI-compatible chat model; undefined: the offline answerer. */
  llm?: LlmConfig;
  maxTokens: number;
  temperature: number;
  bucket: string;
  storage: ObjectStoreConfig;
  vectors: CaptionQaVectorConfig;
  retention: FrameRetention;
  models: { imageEmbedder?: string; textEmbedder?: string };
}

const OWNED_PREFIXES = ['CAPTION_QA_', 'LLM_'];

const ianaZone = Joi.string().custom((value: string, helpers) =>
  IANAZone.isValidZone(value) ? value : helpers.message({ custom: `"${value}" is not an IANA time zone name` }),
);

/** The environment as `schema` validates it (defaults applied). */
interface CaptionQaEnv extends PlatformEnv, LlmEnv {
  ARGUS_MODEL_IMAGE_EMBEDDER?: string;
  ARGUS_MODEL_TEXT_EMBEDDER?: string;
  CAPTION_QA_HOST: string;
  CAPTION_QA_PORT: number;
  CAPTION_QA_DATA_DIR?: string;
  CAPTION_QA_PRELOAD_MODELS: boolean;
  CAPTION_QA_MAX_BODY_MB: number;
  CAPTION_QA_MAX_CAPTION_CHARS: number;
  CAPTION_QA_MAX_QUESTION_CHARS: number;
  CAPTION_QA_TOP_K: number;
  CAPTION_QA_MIN_SCORE: number;
  CAPTION_QA_TIME_ZONE: string;
  CAPTION_QA_AT_TOLERANCE_MINUTES: number;
  CAPTION_QA_COLLAPSE_SIMILARITY: number;
  CAPTION_QA_COLLAPSE_GAP_SECONDS: number;
  CAPTION_QA_HEARTBEAT_MS: number;
  CAPTION_QA_MAX_TOKENS: number;
  CAPTION_QA_TEMPERATURE: number;
  CAPTION_QA_BUCKET: string;
  CAPTION_QA_FRAME_MAX_MB: number;
  CAPTION_QA_FRAME_MAX_PIXELS: number;
  CAPTION_QA_FRAME_RETENTION_COUNT: number;
  CAPTION_QA_FRAME_RETENTION_HOURS: number;
  CAPTION_QA_RETENTION_INTERVAL_SECONDS: number;
  CAPTION_QA_STORAGE_BACKEND: 'local' | 's3';
  CAPTION_QA_S3_ENDPOINT?: string;
  CAPTION_QA_S3_REGION: string;
  CAPTION_QA_S3_ACCESS_KEY_ID?: string;
  CAPTION_QA_S3_SECRET_ACCESS_KEY?: string;
  CAPTION_QA_S3_FORCE_PATH_STYLE: boolean;
  CAPTION_QA_S3_CHECKSUM_MODE: 'when_supported' | 'when_required';
  CAPTION_QA_VECTORDB_BACKEND: 'lancedb' | 'weaviate';
  CAPTION_QA_VECTORDB_TABLE: string;
  /** Required when CAPTION_QA_VECTORDB_BACKEND is weaviate (the schema's `when`). */
  CAPTION_QA_WEAVIATE_URL?: string;
  CAPTION_QA_WEAVIATE_GRPC_URL?: string;
  CAPTION_QA_WEAVIATE_API_KEY?: string;
}

const schema = Joi.object<CaptionQaEnv, true>({
  ...platformEnvSchema,
  ...llmEnvSchema,
  ARGUS_MODEL_IMAGE_EMBEDDER: Joi.string().description('Image embedding model (directory name or absolute path)'),
  ARGUS_MODEL_TEXT_EMBEDDER: Joi.string().description('Text embedding model (directory name or absolute path)'),
  CAPTION_QA_HOST: Joi.string().default('127.0.0.1'),
  CAPTION_QA_PORT: envPort().default(4172),
  CAPTION_QA_DATA_DIR: Joi.string(),
  CAPTION_QA_PRELOAD_MODELS: envBoolean().default(true),
  CAPTION_QA_MAX_BODY_MB: Joi.number().min(0.01).max(256).default(8),
  CAPTION_QA_MAX_CAPTION_CHARS: Joi.number().integer().min(1).max(100_000).default(4000),
  CAPTION_QA_MAX_QUESTION_CHARS: Joi.number().integer().min(1).max(100_000).default(2000),
  CAPTION_QA_TOP_K: Joi.number().integer().min(1).max(100).default(8),
  CAPTION_QA_MIN_SCORE: Joi.number().min(-1).max(1).default(0.2),
  CAPTION_QA_TIME_ZONE: ianaZone.default('UTC'),
  CAPTION_QA_AT_TOLERANCE_MINUTES: Joi.number().min(0).max(720).default(5),
  CAPTION_QA_COLLAPSE_SIMILARITY: Joi.number().min(0).max(1).default(0.75),
  CAPTION_QA_COLLAPSE_GAP_SECONDS: Joi.number().min(0).max(86_400).default(120),
  CAPTION_QA_HEARTBEAT_MS: Joi.number().integer().min(1).max(600_000).default(15_000),
  CAPTION_QA_MAX_TOKENS: Joi.number().integer().min(1).max(32_768).default(512),
  CAPTION_QA_TEMPERATURE: Joi.number().min(0).max(2).default(0.2),
  CAPTION_QA_BUCKET: Joi.string()
    .pattern(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/)
    .default('caption-qa'),
  CAPTION_QA_FRAME_MAX_MB: Joi.number().min(0.001).max(64).default(4),
  CAPTION_QA_FRAME_MAX_PIXELS: Joi.number().integer().min(1).max(268_402_689).default(40_000_000),
  CAPTION_QA_FRAME_RETENTION_COUNT: Joi.number().integer().min(0).default(10_000),
  CAPTION_QA_FRAME_RETENTION_HOURS: Joi.number().min(0).default(168),
  CAPTION_QA_RETENTION_INTERVAL_SECONDS: Joi.number().min(1).max(86_400).default(60),
  CAPTION_QA_STORAGE_BACKEND: Joi.string().valid('local', 's3').default('local'),
  CAPTION_QA_S3_ENDPOINT: envHttpUrl(),
  CAPTION_QA_S3_REGION: Joi.string().default('us-east-1'),
  CAPTION_QA_S3_ACCESS_KEY_ID: Joi.string(),
  CAPTION_QA_S3_SECRET_ACCESS_KEY: Joi.string(),
  CAPTION_QA_S3_FORCE_PATH_STYLE: envBoolean().default(false),
  CAPTION_QA_S3_CHECKSUM_MODE: Joi.string().valid('when_supported', 'when_required').default('when_supported'),
  CAPTION_QA_VECTORDB_BACKEND: Joi.string().valid('lancedb', 'weaviate').default('lancedb'),
  CAPTION_QA_VECTORDB_TABLE: Joi.string()
    .pattern(/^[A-Za-z][A-Za-z0-9_]{0,62}$/)
    .default('caption_qa'),
  CAPTION_QA_WEAVIATE_URL: envHttpUrl(),
  CAPTION_QA_WEAVIATE_GRPC_URL: envHttpUrl(),
  CAPTION_QA_WEAVIATE_API_KEY: Joi.string(),
})
  .when(Joi.object({ CAPTION_QA_VECTORDB_BACKEND: Joi.valid('weaviate').required() }).unknown(), {
    then: Joi.object({ CAPTION_QA_WEAVIATE_URL: Joi.required() }),
  })
  .and('CAPTION_QA_S3_ACCESS_KEY_ID', 'CAPTION_QA_S3_SECRET_ACCESS_KEY');

/** What caption-qa reads from the environment, and the prefixes it owns (LLM_* shared with alert-dispatch). */
export const captionQaSettings: SettingsScope = { schema, prefixes: OWNED_PREFIXES };

const MB = 1024 * 1024;

/** Weaviate collection names are capitalised class names: `caption_qa` → `CaptionQa`. */
function className(table: string): string {
  return table
    .split('_')
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');
}

/** Reads the service's settings from `env` (the only place process.env reaches); throws ConfigError listing every problem. */
export function loadCaptionQaConfig(env: NodeJS.ProcessEnv): CaptionQaConfig {
  const c = loadConfig('caption-qa', schema, env, OWNED_PREFIXES);
  const platform = toPlatformConfig(c);
  const dataDir = path.resolve(c.CAPTION_QA_DATA_DIR ?? path.join(platform.dataDir, 'caption-qa'));
  const table = c.CAPTION_QA_VECTORDB_TABLE;
  return {
    platform,
    host: c.CAPTION_QA_HOST,
    port: c.CAPTION_QA_PORT,
    dataDir,
    preloadModels: c.CAPTION_QA_PRELOAD_MODELS,
    maxBodyBytes: Math.round(c.CAPTION_QA_MAX_BODY_MB * MB),
    maxCaptionChars: c.CAPTION_QA_MAX_CAPTION_CHARS,
    maxQuestionChars: c.CAPTION_QA_MAX_QUESTION_CHARS,
    retrieval: {
      topK: c.CAPTION_QA_TOP_K,
      minScore: c.CAPTION_QA_MIN_SCORE,
      timeZone: c.CAPTION_QA_TIME_ZONE,
      atToleranceMs: Math.round(c.CAPTION_QA_AT_TOLERANCE_MINUTES * 60_000),
      collapseSimilarity: c.CAPTION_QA_COLLAPSE_SIMILARITY,
      collapseGapMs: Math.round(c.CAPTION_QA_COLLAPSE_GAP_SECONDS * 1000),
    },
    heartbeatMs: c.CAPTION_QA_HEARTBEAT_MS,
    llm: llmConfigFrom(c),
    maxTokens: c.CAPTION_QA_MAX_TOKENS,
    temperature: c.CAPTION_QA_TEMPERATURE,
    bucket: c.CAPTION_QA_BUCKET,
    storage:
      c.CAPTION_QA_STORAGE_BACKEND === 's3'
        ? {
            backend: 's3',
            endpoint: c.CAPTION_QA_S3_ENDPOINT,
            region: c.CAPTION_QA_S3_REGION,
            accessKeyId: c.CAPTION_QA_S3_ACCESS_KEY_ID,
            secretAccessKey: c.CAPTION_QA_S3_SECRET_ACCESS_KEY,
            forcePathStyle: c.CAPTION_QA_S3_FORCE_PATH_STYLE,
            checksumWhenRequired: c.CAPTION_QA_S3_CHECKSUM_MODE === 'when_required',
          }
        : { backend: 'local', root: path.join(dataDir, 'frames') },
    vectors:
      c.CAPTION_QA_VECTORDB_BACKEND === 'weaviate'
        ? {
            backend: 'weaviate',
            // The schema's `when` requires the URL with this backend; a type cannot say so.
            url: c.CAPTION_QA_WEAVIATE_URL!,
            grpcUrl: c.CAPTION_QA_WEAVIATE_GRPC_URL,
            apiKey: c.CAPTION_QA_WEAVIATE_API_KEY,
            captionTable: `${className(table)}Captions`,
            frameTable: `${className(table)}Frames`,
          }
        : {
            backend: 'lancedb',
            dir: path.join(dataDir, 'vectors'),
            captionTable: `${table}_captions`,
            frameTable: `${table}_frames`,
          },
    retention: {
      maxBytes: Math.round(c.CAPTION_QA_FRAME_MAX_MB * MB),
      maxPixels: c.CAPTION_QA_FRAME_MAX_PIXELS,
      maxCount: c.CAPTION_QA_FRAME_RETENTION_COUNT,
      maxAgeMs: Math.round(c.CAPTION_QA_FRAME_RETENTION_HOURS * 3_600_000),
      sweepIntervalMs: Math.round(c.CAPTION_QA_RETENTION_INTERVAL_SECONDS * 1000),
    },
    models: { imageEmbedder: c.ARGUS_MODEL_IMAGE_EMBEDDER, textEmbedder: c.ARGUS_MODEL_TEXT_EMBEDDER },
  };
}
