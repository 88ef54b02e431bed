import path from 'node:path';
import Joi from 'joi';
import { envPort, loadConfig } from '../lib/config/index.js';

/** Validated settings of the alert dispatch service. */
export interface AlertDispatchConfig {
  host: string;
  port: number;
  bodyLimit: string;
  subscriptionsFile?: string;
  snapshotDir: string;
  webhookUrl?: string;
  mqttBroker?: string;
  mqttTopic: string;
  mcpConfigFile?: string;
  llm?: { baseUrl: string; model: string; apiKey?: string; timeoutMs: number };
  tools: { timeoutMs: number; maxAttempts: number; baseDelayMs: number; maxDelayMs: number };
  dedupMaxEntries: number;
  keepaliveMs: number;
}

const httpUrl = () => Joi.string().uri({ scheme: ['http', 'https'] });

const schema = Joi.object({
  ALERT_DISPATCH_HOST: Joi.string().default('127.0.0.1'),
  ALERT_DISPATCH_PORT: envPort().default(8000),
  ALERT_DISPATCH_BODY_LIMIT: Joi.string()
    .pattern(/^\d+(kb|mb)$/i)
    .default('20mb'),
  ALERT_SUBSCRIPTIONS_FILE: Joi.string(),
  ALERT_SNAPSHOT_DIR: Joi.string(),
  ARGUS_DATA_DIR: Joi.string().default('.data'),
  WEBHOOK_URL: httpUrl(),
  MQTT_BROKER: Joi.string().uri({ scheme: ['mqtt', 'mqtts', 'tcp', 'ssl', 'ws', 'wss'] }),
  ALERT_MQTT_TOPIC: Joi.string().default('argus/alerts/{source_id}'),
  ALERT_MCP_CONFIG_FILE: Joi.string(),
  LLM_BASE_URL: httpUrl(),
  LLM_MODEL: Joi.string().default('default'),
  LLM_API_KEY: Joi.string(),
  LLM_TIMEOUT_MS: Joi.number().integer().min(100).max(300_000).default(15_000),
  ALERT_TOOL_TIMEOUT_MS: Joi.number().integer().min(10).max(300_000).default(10_000),
  ALERT_TOOL_MAX_ATTEMPTS: Joi.number().integer().min(1).max(10).default(3),
  ALERT_TOOL_RETRY_BASE_MS: Joi.number().integer().min(0).max(60_000).default(250),
  ALERT_TOOL_RETRY_MAX_MS: Joi.number().integer().min(0).max(300_000).default(10_000),
  ALERT_DEDUP_MAX_ENTRIES: Joi.number().integer().min(1).max(10_000_000).default(10_000),
  ALERT_SSE_KEEPALIVE_MS: Joi.number().integer().min(100).default(15_000),
});

/** Reads the service's settings from `env` (the only place process.env reaches); throws ConfigError listing every problem. */
export function loadAlertDispatchConfig(env: NodeJS.ProcessEnv): AlertDispatchConfig {
  const c = loadConfig<Record<string, any>>('alert-dispatch', schema, env, ['ALERT_']);
  return {
    host: c.ALERT_DISPATCH_HOST,
    port: c.ALERT_DISPATCH_PORT,
    bodyLimit: c.ALERT_DISPATCH_BODY_LIMIT,
    subscriptionsFile: c.ALERT_SUBSCRIPTIONS_FILE,
    snapshotDir: c.ALERT_SNAPSHOT_DIR ?? path.join(c.ARGUS_DATA_DIR, 'snapshots'),
    webhookUrl: c.WEBHOOK_URL,
    mqttBroker: c.MQTT_BROKER,
    mqttTopic: c.ALERT_MQTT_TOPIC,
    mcpConfigFile: c.ALERT_MCP_CONFIG_FILE,
    llm: c.LLM_BASE_URL
      ? { baseUrl: c.LLM_BASE_URL, model: c.LLM_MODEL, apiKey: c.LLM_API_KEY, timeoutMs: c.LLM_TIMEOUT_MS }
      : undefined,
    tools: {
      timeoutMs: c.ALERT_TOOL_TIMEOUT_MS,
      maxAttempts: c.ALERT_TOOL_MAX_ATTEMPTS,
      baseDelayMs: c.ALERT_TOOL_RETRY_BASE_MS,
      maxDelayMs: c.ALERT_TOOL_RETRY_MAX_MS,
    },
    dedupMaxEntries: c.ALERT_DEDUP_MAX_ENTRIES,
    keepaliveMs: c.ALERT_SSE_KEEPALIVE_MS,
  };
}
