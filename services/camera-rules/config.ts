import path from 'node:path';
import Joi from 'joi';
import {
  envBoolean,
  envHttpUrl,
  envList,
  envPort,
  loadConfig,
  platformEnvSchema,
  toPlatformConfig,
} from '../lib/config/index.js';
import { vlmEndpointFrom, vlmEnvSchema, vlmMaxTokensSchema, type VlmEndpoint, type VlmEnv } from '../lib/llm/index.js';
import { mqttBrokerUrl } from '../lib/mqtt/index.js';
import type { HandlerPolicies } from './events/event-handler.js';
import type { PlatformConfig, PlatformEnv, SettingsScope } from '../lib/config/index.js';

/** Where cameras and their events come from: a Frigate NVR, or a recordings directory in Frigate's layout. */
export type RecorderConfig =
  | {
      kind: 'frigate';
      /** Frigate's HTTP root, e.g. `http://frigate:5000` (no trailing `/`). */
      url: string;
      /** Sent as `Authorization: Bearer …` when set (Frigate's authenticated port, or a proxy in front of it). */
      token?: string;
      /** A Frigate user whose session (`/api/login`, cookie `frigate_token`) authenticates every request. */
      credentials?: { user: string; password: string };
      /** Bound of one request to Frigate, milliseconds. */
      timeoutMs: number;
      /** Frigate's MQTT topic prefix (`mqtt.topic_prefix` in its config). */
      topicPrefix: string;
      /** The broker Frigate publishes on; undefined: events are only read over HTTP. */
      mqttBroker?: string;
    }
  | {
      kind: 'directory';
      /** Root of `YYYY-MM-DD/HH/<camera>/MM.SS.mp4` (UTC). */
      dir: string;
      /** Where the analyses of its segments (detections from dataprep) are kept, shared by the watchers. */
      detectionsDir: string;
    };

/** Validated settings of the camera-rules service. */
export interface CameraRulesConfig {
  platform: PlatformConfig;
  host: string;
  port: number;
  /** State of this service under the data dir (the default recordings directory). */
  dataDir: string;
  recorder: RecorderConfig;
  /** dataprep's API root (its base path included): health, ingest and search. */
  dataprepUrl: string;
  /** alert-dispatch's API root (`/api/v1` included): alerts go to `{alertDispatchUrl}/alerts`. */
  alertDispatchUrl: string;
  /** Bound of one request to dataprep or alert-dispatch, milliseconds. */
  serviceTimeoutMs: number;
  /** What add_to_search does: dataprep's bucket, its frame interval, the bound of one upload (embedded on arrival). */
  search: { bucket: string; frameInterval: number; timeoutMs: number };
  /** Tools alert-dispatch is asked to run for each alert. */
  alertTools: string[];
  /** The vision-language model of summaries; undefined: offline summaries. */
  vlm?: VlmEndpoint & { maxTokens: number };
  /** Retries: the recorder's clip becoming final, and each action's calls. */
  policies: HandlerPolicies;
  /** Time between a watcher's catch-ups with the recorder's event list, milliseconds. */
  watcherPollMs: number;
  /** With Frigate: whether watchers send their camera's new recordings to search (besides rule actions). */
  indexRecordings: boolean;
  /** How long a rule action's claim lives without renewal before another handling may run it again. */
  claimLeaseMs: number;
}

const OWNED_PREFIXES = ['CAMERA_RULES_', 'MQTT_'];

/** The service's variables as the schema validates them (defaults applied). */
interface CameraRulesEnv extends PlatformEnv, VlmEnv {
  CAMERA_RULES_HOST: string;
  CAMERA_RULES_PORT: number;
  CAMERA_RULES_DATA_DIR?: string;
  CAMERA_RULES_FRIGATE_URL?: string;
  CAMERA_RULES_FRIGATE_TOKEN?: string;
  CAMERA_RULES_FRIGATE_USER?: string;
  CAMERA_RULES_FRIGATE_PASSWORD?: string;
  CAMERA_RULES_FRIGATE_TIMEOUT_MS: number;
  CAMERA_RULES_FRIGATE_TOPIC_PREFIX: string;
  CAMERA_RULES_RECORDINGS_DIR?: string;
  CAMERA_RULES_DETECTIONS_DIR?: string;
  CAMERA_RULES_DATAPREP_URL: string;
  CAMERA_RULES_ALERT_DISPATCH_URL: string;
  CAMERA_RULES_SERVICE_TIMEOUT_MS: number;
  CAMERA_RULES_SEARCH_BUCKET: string;
  CAMERA_RULES_SEARCH_FRAME_INTERVAL: number;
  CAMERA_RULES_INGEST_TIMEOUT_MS: number;
  CAMERA_RULES_ALERT_TOOLS: string[];
  CAMERA_RULES_CLIP_ATTEMPTS: number;
  CAMERA_RULES_ACTION_ATTEMPTS: number;
  CAMERA_RULES_WATCHER_POLL_SECONDS: number;
  CAMERA_RULES_INDEX_RECORDINGS: boolean;
  CAMERA_RULES_CLAIM_LEASE_SECONDS: number;
  VLM_MAX_TOKENS: number;
  MQTT_BROKER?: string;
}

const schema = Joi.object<CameraRulesEnv>({
  ...platformEnvSchema,
  CAMERA_RULES_HOST: Joi.string().default('127.0.0.1'),
  // 8001, not the contract's 8000: under `argus up` alert-dispatch listens on 8000 in the same process.
  CAMERA_RULES_PORT: envPort().default(8001),
  CAMERA_RULES_DATA_DIR: Joi.string(),
  CAMERA_RULES_FRIGATE_URL: envHttpUrl().description('Frigate HTTP root; set, Frigate is the recorder'),
  CAMERA_RULES_FRIGATE_TOKEN: Joi.string().description('Bearer token for Frigate (never logged)'),
  CAMERA_RULES_FRIGATE_USER: Joi.string().max(256).description('Frigate user whose session authenticates requests'),
  CAMERA_RULES_FRIGATE_PASSWORD: Joi.string().max(1024).description("That user's password (never logged)"),
  CAMERA_RULES_FRIGATE_TIMEOUT_MS: Joi.number().integer().min(100).max(300_000).default(5000),
  CAMERA_RULES_FRIGATE_TOPIC_PREFIX: Joi.string()
    .pattern(/^[^#+\s]+$/)
    .max(128)
    .default('frigate'),
  CAMERA_RULES_RECORDINGS_DIR: Joi.string().description('Recordings in Frigate layout, when no Frigate is configured'),
  CAMERA_RULES_DETECTIONS_DIR: Joi.string().description("The directory recorder's segment analyses"),
  CAMERA_RULES_DATAPREP_URL: envHttpUrl().default('http://127.0.0.1:6007/v1/dataprep'),
  CAMERA_RULES_ALERT_DISPATCH_URL: envHttpUrl().default('http://127.0.0.1:8000/api/v1'),
  CAMERA_RULES_SERVICE_TIMEOUT_MS: Joi.number().integer().min(100).max(300_000).default(10_000),
  CAMERA_RULES_SEARCH_BUCKET: Joi.string()
    .pattern(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/)
    .default('camera-events'),
  CAMERA_RULES_SEARCH_FRAME_INTERVAL: Joi.number().integer().min(1).max(60).default(15),
  CAMERA_RULES_INGEST_TIMEOUT_MS: Joi.number().integer().min(1000).max(3_600_000).default(300_000),
  CAMERA_RULES_ALERT_TOOLS: envList().default(['log_alert', 'capture_snapshot']),
  CAMERA_RULES_CLIP_ATTEMPTS: Joi.number().integer().min(1).max(100).default(8),
  CAMERA_RULES_ACTION_ATTEMPTS: Joi.number().integer().min(1).max(100).default(4),
  CAMERA_RULES_WATCHER_POLL_SECONDS: Joi.number().min(1).max(86_400).default(60),
  CAMERA_RULES_INDEX_RECORDINGS: envBoolean().default(true),
  CAMERA_RULES_CLAIM_LEASE_SECONDS: Joi.number().min(3).max(3600).default(60),
  // The VLM_* settings of every service with a vision-language model (lib/llm); frame-analysis owns the prefix.
  ...vlmEnvSchema,
  ...vlmMaxTokensSchema,
  MQTT_BROKER: mqttBrokerUrl(),
})
  .oxor('CAMERA_RULES_FRIGATE_URL', 'CAMERA_RULES_RECORDINGS_DIR')
  .oxor('CAMERA_RULES_FRIGATE_URL', 'CAMERA_RULES_DETECTIONS_DIR')
  .and('CAMERA_RULES_FRIGATE_USER', 'CAMERA_RULES_FRIGATE_PASSWORD')
  .oxor('CAMERA_RULES_FRIGATE_TOKEN', 'CAMERA_RULES_FRIGATE_USER');

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** What camera-rules reads from the environment, and the prefixes it owns (MQTT_* shared with alert-dispatch). */
export const cameraRulesSettings: SettingsScope = { schema, prefixes: OWNED_PREFIXES };

/** Reads the service's settings from `env` (the only place process.env reaches); throws ConfigError listing every problem. */
export function loadCameraRulesConfig(env: NodeJS.ProcessEnv): CameraRulesConfig {
  const c = loadConfig('camera-rules', schema, env, OWNED_PREFIXES);
  const platform = toPlatformConfig(c);
  const vlm = vlmEndpointFrom(c);
  const dataDir = path.resolve(c.CAMERA_RULES_DATA_DIR ?? path.join(platform.dataDir, 'camera-rules'));
  const recorder: RecorderConfig = c.CAMERA_RULES_FRIGATE_URL
    ? {
        kind: 'frigate',
        url: trimSlash(c.CAMERA_RULES_FRIGATE_URL),
        token: c.CAMERA_RULES_FRIGATE_TOKEN,
        credentials:
          c.CAMERA_RULES_FRIGATE_USER && c.CAMERA_RULES_FRIGATE_PASSWORD
            ? { user: c.CAMERA_RULES_FRIGATE_USER, password: c.CAMERA_RULES_FRIGATE_PASSWORD }
            : undefined,
        timeoutMs: c.CAMERA_RULES_FRIGATE_TIMEOUT_MS,
        topicPrefix: c.CAMERA_RULES_FRIGATE_TOPIC_PREFIX,
        mqttBroker: c.MQTT_BROKER,
      }
    : {
        kind: 'directory',
        dir: path.resolve(c.CAMERA_RULES_RECORDINGS_DIR ?? path.join(dataDir, 'recordings')),
        detectionsDir: path.resolve(c.CAMERA_RULES_DETECTIONS_DIR ?? path.join(dataDir, 'detections')),
      };
  return {
    platform,
    host: c.CAMERA_RULES_HOST,
    port: c.CAMERA_RULES_PORT,
    dataDir,
    recorder,
    dataprepUrl: trimSlash(c.CAMERA_RULES_DATAPREP_URL),
    alertDispatchUrl: trimSlash(c.CAMERA_RULES_ALERT_DISPATCH_URL),
    serviceTimeoutMs: c.CAMERA_RULES_SERVICE_TIMEOUT_MS,
    search: {
      bucket: c.CAMERA_RULES_SEARCH_BUCKET,
      frameInterval: c.CAMERA_RULES_SEARCH_FRAME_INTERVAL,
      timeoutMs: c.CAMERA_RULES_INGEST_TIMEOUT_MS,
    },
    alertTools: c.CAMERA_RULES_ALERT_TOOLS,
    vlm: vlm && { ...vlm, maxTokens: c.VLM_MAX_TOKENS },
    policies: {
      media: { attempts: c.CAMERA_RULES_CLIP_ATTEMPTS, baseDelayMs: 1000, maxDelayMs: 15_000 },
      action: { attempts: c.CAMERA_RULES_ACTION_ATTEMPTS, baseDelayMs: 1000, maxDelayMs: 8000 },
    },
    watcherPollMs: Math.round(c.CAMERA_RULES_WATCHER_POLL_SECONDS * 1000),
    indexRecordings: c.CAMERA_RULES_INDEX_RECORDINGS,
    claimLeaseMs: Math.round(c.CAMERA_RULES_CLAIM_LEASE_SECONDS * 1000),
  };
}
