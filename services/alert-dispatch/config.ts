import path from 'node:path';
import Joi from 'joi';
import { envHttpUrl, envPort, loadConfig, platformEnvSchema, toPlatformConfig } from '../lib/config/index.js';
import type { PlatformConfig, PlatformEnv, SettingsScope } from '../lib/config/index.js';
import { llmConfigFrom, llmEnvSchema, type LlmConfig, type LlmEnv } from '../lib/llm/index.js';
import { mqttBrokerUrl } from '../lib/mqtt/index.js';
import { AllowList, envAllowList } from '../lib/outbound/index.js';

/** Validated settings of the alert dispatch service. */
export interface AlertDispatchConfig {
  /** Settings every Argus process shares (data dir, logging). */
  platform: PlatformConfig;
  host: string;
  port: number;
  bodyLimit: string;
  subscriptionsFile?: string;
  snapshotDir: string;
  webhookUrl?: string;
  /** Where a webhook URL from tool_arguments may go (WEBHOOK_URL_ALLOW); nowhere by default. */
  webhookUrlAllow: AllowList;
  mqttBroker?: string;
  mqttTopic: string;
  mcpConfigFile?: string;
  /** The model of agent mode (LLM_*, the settings caption-qa shares); undefined: rules only. */
  llm?: LlmConfig;
  tools: { timeoutMs: number; maxAttempts: number; baseDelayMs: number; maxDelayMs: number };
  dedupMaxEntries: number;
  keepaliveMs: number;
  /** Dispatch events kept for SSE clients that resume with Last-Event-ID (with ARGUS_REDIS_URL). */
  streamReplay: number;
  /** Bounded intake of POST /alerts. */
  queue: { concurrency: number; maxLength: number };
  /** How long running dispatches may finish at shutdown before their tools and model calls are aborted. */
  drainGraceMs: number;
}

/**
 * Prefixes of the variables this service owns: an unknown one (a typo such as `LLM_BASE_ULR`) stops start-up. The
 * contract names WEBHOOK_URL, MQTT_BROKER and the LLM settings without the service prefix.
 */
const OWNED_PREFIXES = ['ALERT_', 'LLM_', 'MQTT_', 'WEBHOOK_'];

/** The environment as `schema` validates it (defaults applied). */
interface AlertDispatchEnv extends PlatformEnv, LlmEnv {
  ALERT_DISPATCH_HOST: string;
  ALERT_DISPATCH_PORT: number;
  ALERT_DISPATCH_BODY_LIMIT: string;
  ALERT_SUBSCRIPTIONS_FILE?: string;
  ALERT_SNAPSHOT_DIR?: string;
  WEBHOOK_URL?: string;
  WEBHOOK_URL_ALLOW?: AllowList;
  MQTT_BROKER?: string;
  ALERT_MQTT_TOPIC: string;
  ALERT_MCP_CONFIG_FILE?: string;
  ALERT_TOOL_TIMEOUT_MS: number;
  ALERT_TOOL_MAX_ATTEMPTS: number;
  ALERT_TOOL_RETRY_BASE_MS: number;
  ALERT_TOOL_RETRY_MAX_MS: number;
  ALERT_DEDUP_MAX_ENTRIES: number;
  ALERT_SSE_KEEPALIVE_MS: number;
  ALERT_STREAM_REPLAY: number;
  ALERT_QUEUE_CONCURRENCY: number;
  ALERT_QUEUE_LENGTH: number;
  ALERT_DRAIN_GRACE_MS: number;
}

/** The keys `schema` must declare: joi's typings tie a schema's kind to its value, and the allow list is parsed text. */
type AlertDispatchEnvKeys = Omit<AlertDispatchEnv, 'WEBHOOK_URL_ALLOW'> & { WEBHOOK_URL_ALLOW?: string };

const schema = Joi.object<AlertDispatchEnv, true, AlertDispatchEnvKeys>({
  ...platformEnvSchema,
  ALERT_DISPATCH_HOST: Joi.string().default('127.0.0.1'),
  ALERT_DISPATCH_PORT: envPort().default(8000),
  ALERT_DISPATCH_BODY_LIMIT: Joi.string()
    .pattern(/^\d+(kb|mb)$/i)
    .default('20mb'),
  ALERT_SUBSCRIPTIONS_FILE: Joi.string(),
  ALERT_SNAPSHOT_DIR: Joi.string(),
  WEBHOOK_URL: envHttpUrl(),
  WEBHOOK_URL_ALLOW: envAllowList(),
  MQTT_BROKER: mqttBrokerUrl(),
  ALERT_MQTT_TOPIC: Joi.string().default('argus/alerts/{source_id}'),
  ALERT_MCP_CONFIG_FILE: Joi.string(),
  ...llmEnvSchema,
  ALERT_TOOL_TIMEOUT_MS: Joi.number().integer().min(10).max(300_000).default(10_000),
  ALERT_TOOL_MAX_ATTEMPTS: Joi.number().integer().min(1).max(10).default(3),
  ALERT_TOOL_RETRY_BASE_MS: Joi.number().integer().min(0).max(60_000).default(250),
  ALERT_TOOL_RETRY_MAX_MS: Joi.number().integer().min(0).max(300_000).default(10_000),
  ALERT_DEDUP_MAX_ENTRIES: Joi.number().integer().min(1).max(10_000_000).default(10_000),
  ALERT_SSE_KEEPALIVE_MS: Joi.number().integer().min(100).default(15_000),
  ALERT_STREAM_REPLAY: Joi.number().integer().min(1).max(100_000).default(1000),
  ALERT_QUEUE_CONCURRENCY: Joi.number().integer().min(1).max(1024).default(16),
  ALERT_QUEUE_LENGTH: Joi.number().integer().min(0).max(100_000).default(128),
  ALERT_DRAIN_GRACE_MS: Joi.number().integer().min(0).max(600_000).default(5000),
});

/** What alert-dispatch reads from the environment, and the prefixes it owns. */
export const alertDispatchSettings: SettingsScope = { schema, prefixes: OWNED_PREFIXES };

/** Reads the service's settings from `env` (the only place process.env reaches); throws ConfigError listing every problem. */
export function loadAlertDispatchConfig(env: NodeJS.ProcessEnv): AlertDispatchConfig {
  const c = loadConfig('alert-dispatch', schema, env, OWNED_PREFIXES);
  const platform = toPlatformConfig(c);
  return {
    platform,
    host: c.ALERT_DISPATCH_HOST,
    port: c.ALERT_DISPATCH_PORT,
    bodyLimit: c.ALERT_DISPATCH_BODY_LIMIT,
    subscriptionsFile: c.ALERT_SUBSCRIPTIONS_FILE,
    snapshotDir: c.ALERT_SNAPSHOT_DIR ?? path.join(platform.dataDir, 'snapshots'),
    webhookUrl: c.WEBHOOK_URL,
    webhookUrlAllow: c.WEBHOOK_URL_ALLOW ?? AllowList.EMPTY,
    mqttBroker: c.MQTT_BROKER,
    mqttTopic: c.ALERT_MQTT_TOPIC,
    mcpConfigFile: c.ALERT_MCP_CONFIG_FILE,
    llm: llmConfigFrom(c),
    tools: {
      timeoutMs: c.ALERT_TOOL_TIMEOUT_MS,
      maxAttempts: c.ALERT_TOOL_MAX_ATTEMPTS,
      baseDelayMs: c.ALERT_TOOL_RETRY_BASE_MS,
      maxDelayMs: c.ALERT_TOOL_RETRY_MAX_MS,
    },
    dedupMaxEntries: c.ALERT_DEDUP_MAX_ENTRIES,
    keepaliveMs: c.ALERT_SSE_KEEPALIVE_MS,
    streamReplay: c.ALERT_STREAM_REPLAY,
    queue: { concurrency: c.ALERT_QUEUE_CONCURRENCY, maxLength: c.ALERT_QUEUE_LENGTH },
    drainGraceMs: c.ALERT_DRAIN_GRACE_MS,
  };
}
