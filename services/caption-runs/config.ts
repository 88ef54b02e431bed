import path from 'node:path';
import Joi from 'joi';
import { envHttpUrl, envPort, loadConfig, platformEnvSchema, toPlatformConfig } from '../lib/config/index.js';
import type { PlatformConfig, PlatformEnv, SettingsScope } from '../lib/config/index.js';
import { DEFAULT_MODEL_NAMES } from '../lib/inference/index.js';
import { vlmEndpointFrom, vlmEnvSchema, vlmImageMaxSideSchema, type VlmEnv } from '../lib/llm/index.js';
import { mqttBrokerUrl } from '../lib/mqtt/index.js';
import { envAllowList, type AllowList } from '../lib/outbound/index.js';

/** The OpenAI-compatible vision-language model that writes captions (the `VLM_*` settings, shared with frame-analysis). */
export interface VlmConfig {
  /** API root including its version path; requests go to `{baseUrl}/chat/completions`, models to `{baseUrl}/models`. */
  baseUrl: string;
  /** The model a run uses when the request names none. */
  model: string;
  apiKey?: string;
  /** Wait for headers, the first token and each gap, milliseconds. */
  timeoutMs: number;
  temperature: number;
  /** Frames are scaled so that their longer side is at most this before they are sent. */
  imageMaxSide: number;
}

/** How the caption worker paces itself against a stream (WorkerTiming's inputs). */
export interface StreamSettings {
  ioTimeoutMs: number;
  idleTimeoutMs: number;
  reconnectMaxMs: number;
  startAttempts: number;
  statusIntervalMs: number;
}

/** Validated settings of the caption-runs service. */
export interface CaptionRunsConfig {
  platform: PlatformConfig;
  host: string;
  port: number;
  /** The VLM; undefined: captions come from the offline captioner (detections). */
  vlm?: VlmConfig;
  /** When set, RTSP hosts must be (or resolve to) these CIDRs or names; unset: any host. */
  rtspAllow?: AllowList;
  /** Files below this directory may be captioned as streams (demos); unset: none. */
  mediaRoot?: string;
  /** The detector a detection pipeline uses when the request names none (a folder of the models directory). */
  defaultDetector: string;
  /** MQTT_BROKER: what `argus worker caption-run` publishes on (the service is given its process's broker). */
  mqttBroker?: string;
  /** caption-qa's API root (`…/api`): each caption is posted to `{url}/embeddings`; undefined: not posted. */
  captionQaUrl?: string;
  /** alert-dispatch's API root (`…/api/v1`): alert rules are posted to `{url}/alerts`; undefined: not raised. */
  alertsUrl?: string;
  /** Bound of each post to caption-qa and alert-dispatch. */
  postTimeoutMs: number;
  stream: StreamSettings;
  /** The SSE relay: messages a subscriber may have pending, and the quiet time before a status message. */
  relay: { bufferMessages: number; idleMs: number };
  /** Time between metrics WebSocket frames. */
  metricsIntervalMs: number;
  /** CAPTION_RUNS_CREDENTIALS_KEY: seals RTSP passwords in CaptionRuns; undefined: a key file under the data dir. */
  credentialsKey?: string;
}

const OWNED_PREFIXES = ['CAPTION_RUNS_', 'VLM_'];

/** The environment as `schema` validates it (defaults applied). */
interface CaptionRunsEnv extends PlatformEnv, VlmEnv {
  ARGUS_MODEL_DETECTOR?: string;
  CAPTION_RUNS_HOST: string;
  CAPTION_RUNS_PORT: number;
  CAPTION_RUNS_RTSP_ALLOW?: AllowList;
  CAPTION_RUNS_MEDIA_ROOT?: string;
  VLM_IMAGE_MAX_SIDE: number;
  MQTT_BROKER?: string;
  CAPTION_RUNS_CAPTION_QA_URL?: string;
  CAPTION_RUNS_ALERTS_URL?: string;
  CAPTION_RUNS_POST_TIMEOUT_MS: number;
  CAPTION_RUNS_RTSP_TIMEOUT_SECONDS: number;
  CAPTION_RUNS_STALL_SECONDS: number;
  CAPTION_RUNS_RECONNECT_MAX_SECONDS: number;
  CAPTION_RUNS_START_ATTEMPTS: number;
  CAPTION_RUNS_STATUS_INTERVAL_SECONDS: number;
  CAPTION_RUNS_STREAM_BUFFER: number;
  CAPTION_RUNS_STREAM_IDLE_MS: number;
  CAPTION_RUNS_METRICS_INTERVAL_MS: number;
  CAPTION_RUNS_CREDENTIALS_KEY?: string;
}

const schema = Joi.object<CaptionRunsEnv, true>({
  ...platformEnvSchema,
  ARGUS_MODEL_DETECTOR: Joi.string().description('Object detection model (directory name or absolute path)'),
  CAPTION_RUNS_HOST: Joi.string().default('127.0.0.1'),
  CAPTION_RUNS_PORT: envPort().default(4173),
  CAPTION_RUNS_RTSP_ALLOW: envAllowList(),
  CAPTION_RUNS_MEDIA_ROOT: Joi.string(),
  // The VLM_* settings of every service with a vision-language model (lib/llm): one setting configures them all.
  ...vlmEnvSchema,
  ...vlmImageMaxSideSchema,
  // MQTT_BROKER is alert-dispatch's name too: one broker for both (argus up embeds one without it: services/lib/mqtt).
  MQTT_BROKER: mqttBrokerUrl(),
  CAPTION_RUNS_CAPTION_QA_URL: envHttpUrl(),
  CAPTION_RUNS_ALERTS_URL: envHttpUrl(),
  CAPTION_RUNS_POST_TIMEOUT_MS: Joi.number().integer().min(100).max(120_000).default(10_000),
  CAPTION_RUNS_RTSP_TIMEOUT_SECONDS: Joi.number().min(1).max(120).default(10),
  CAPTION_RUNS_STALL_SECONDS: Joi.number().min(1).max(600).default(15),
  CAPTION_RUNS_RECONNECT_MAX_SECONDS: Joi.number().min(1).max(3600).default(30),
  CAPTION_RUNS_START_ATTEMPTS: Joi.number().integer().min(1).max(100).default(5),
  CAPTION_RUNS_STATUS_INTERVAL_SECONDS: Joi.number().min(0).max(3600).default(5),
  CAPTION_RUNS_STREAM_BUFFER: Joi.number().integer().min(1).max(100_000).default(256),
  CAPTION_RUNS_STREAM_IDLE_MS: Joi.number().integer().min(10).max(600_000).default(1000),
  CAPTION_RUNS_METRICS_INTERVAL_MS: Joi.number().integer().min(100).max(600_000).default(1000),
  // The service and the caption workers must share it: in the cluster from one Secret in both pods' environment.
  CAPTION_RUNS_CREDENTIALS_KEY: Joi.string().min(32).max(1024),
});

/** What caption-runs reads from the environment, and the prefixes it owns (VLM_* shared with frame-analysis). */
export const captionRunsSettings: SettingsScope = { schema, prefixes: OWNED_PREFIXES };

/** Reads the service's settings from `env` (the only place process.env reaches); throws ConfigError listing every problem. */
export function loadCaptionRunsConfig(env: NodeJS.ProcessEnv): CaptionRunsConfig {
  const c = loadConfig('caption-runs', schema, env, OWNED_PREFIXES);
  const vlm = vlmEndpointFrom(c);
  return {
    platform: toPlatformConfig(c),
    host: c.CAPTION_RUNS_HOST,
    port: c.CAPTION_RUNS_PORT,
    vlm: vlm && { ...vlm, imageMaxSide: c.VLM_IMAGE_MAX_SIDE },
    rtspAllow: c.CAPTION_RUNS_RTSP_ALLOW,
    mediaRoot: c.CAPTION_RUNS_MEDIA_ROOT ? path.resolve(c.CAPTION_RUNS_MEDIA_ROOT) : undefined,
    defaultDetector: c.ARGUS_MODEL_DETECTOR ?? DEFAULT_MODEL_NAMES.detector,
    mqttBroker: c.MQTT_BROKER,
    captionQaUrl: c.CAPTION_RUNS_CAPTION_QA_URL?.replace(/\/+$/, ''),
    alertsUrl: c.CAPTION_RUNS_ALERTS_URL?.replace(/\/+$/, ''),
    postTimeoutMs: c.CAPTION_RUNS_POST_TIMEOUT_MS,
    stream: {
      ioTimeoutMs: Math.round(c.CAPTION_RUNS_RTSP_TIMEOUT_SECONDS * 1000),
      idleTimeoutMs: Math.round(c.CAPTION_RUNS_STALL_SECONDS * 1000),
      reconnectMaxMs: Math.round(c.CAPTION_RUNS_RECONNECT_MAX_SECONDS * 1000),
      startAttempts: c.CAPTION_RUNS_START_ATTEMPTS,
      statusIntervalMs: Math.round(c.CAPTION_RUNS_STATUS_INTERVAL_SECONDS * 1000),
    },
    relay: { bufferMessages: c.CAPTION_RUNS_STREAM_BUFFER, idleMs: c.CAPTION_RUNS_STREAM_IDLE_MS },
    metricsIntervalMs: c.CAPTION_RUNS_METRICS_INTERVAL_MS,
    credentialsKey: c.CAPTION_RUNS_CREDENTIALS_KEY,
  };
}
