import Joi from 'joi';
import { loadConfig, platformEnvSchema, toPlatformConfig } from '../services/lib/config/index.js';
import type { PlatformConfig, PlatformEnv } from '../services/lib/config/index.js';
import type { ControllerSettings } from './controllers/settings.js';
import {
  KUBERNETES_ENV_PREFIXES,
  kubernetesEnvSchema,
  toKubernetesSettings,
  type KubernetesEnv,
  type KubernetesSettings,
} from './drivers/kubernetes/settings.js';

// The operator process's one reader of the environment. Each part owns its settings' shape: the controllers what they
// decide with (controllers/settings.ts), the kubernetes driver its own (drivers/kubernetes/settings.ts).

/** The controllers' settings as `controllerEnvSchema` validates them (defaults applied). */
export interface ControllerEnv {
  ARGUS_INGEST_PARALLELISM: number;
  ARGUS_INGEST_BACKOFF_LIMIT: number;
  ARGUS_INGEST_PENDING_DEADLINE_SECONDS: number;
  ARGUS_JOB_RETENTION_COUNT: number;
  ARGUS_JOB_RETENTION_SECONDS: number;
  ARGUS_CAPTION_RUN_RETENTION_COUNT: number;
  ARGUS_CAPTION_RUN_RETENTION_SECONDS: number;
  ARGUS_OPERATOR_RESYNC_SECONDS: number;
}

/** The controllers' environment variables (joi; also spread into schemas that validate the same environment). */
export const controllerEnvSchema = {
  ARGUS_INGEST_PARALLELISM: Joi.number()
    .integer()
    .min(1)
    .max(64)
    .default(1)
    .description('Worker shards per IngestJob (indexed Job completions and parallelism)'),
  ARGUS_INGEST_BACKOFF_LIMIT: Joi.number()
    .integer()
    .min(0)
    .max(100)
    .default(3)
    .description('Failed worker attempts tolerated per IngestJob before its unprocessed items fail'),
  ARGUS_INGEST_PENDING_DEADLINE_SECONDS: Joi.number()
    .integer()
    .min(1)
    .max(604800)
    .default(600)
    .description(
      'Seconds an IngestJob may wait for its first worker before it fails (spec.pendingDeadlineSeconds overrides)',
    ),
  ARGUS_JOB_RETENTION_COUNT: Joi.number()
    .integer()
    .min(0)
    .max(100000)
    .default(200)
    .description('Finished IngestJobs kept per namespace'),
  ARGUS_JOB_RETENTION_SECONDS: Joi.number()
    .integer()
    .min(0)
    .default(7 * 24 * 3600)
    .description('Seconds a finished IngestJob is kept'),
  ARGUS_CAPTION_RUN_RETENTION_COUNT: Joi.number()
    .integer()
    .min(0)
    .max(100000)
    .default(100)
    .description('Finished (Stopped or Failed) CaptionRuns kept per namespace'),
  ARGUS_CAPTION_RUN_RETENTION_SECONDS: Joi.number()
    .integer()
    .min(0)
    .default(7 * 24 * 3600)
    .description('Seconds a finished CaptionRun is kept after it finished'),
  ARGUS_OPERATOR_RESYNC_SECONDS: Joi.number()
    .integer()
    .min(1)
    .max(86400)
    .default(300)
    .description('Interval of the periodic full reconcile'),
} satisfies Joi.StrictSchemaMap<ControllerEnv>;

/** Maps validated variables onto ControllerSettings. */
export function toControllerSettings(env: ControllerEnv): ControllerSettings {
  return {
    ingest: {
      parallelism: env.ARGUS_INGEST_PARALLELISM,
      backoffLimit: env.ARGUS_INGEST_BACKOFF_LIMIT,
      pendingDeadlineSeconds: env.ARGUS_INGEST_PENDING_DEADLINE_SECONDS,
    },
    retention: { count: env.ARGUS_JOB_RETENTION_COUNT, maxAgeSeconds: env.ARGUS_JOB_RETENTION_SECONDS },
    captionRunRetention: {
      count: env.ARGUS_CAPTION_RUN_RETENTION_COUNT,
      maxAgeSeconds: env.ARGUS_CAPTION_RUN_RETENTION_SECONDS,
    },
    resyncSeconds: env.ARGUS_OPERATOR_RESYNC_SECONDS,
  };
}

/** Reads and validates the controllers' settings (every problem listed in a ConfigError). */
export function loadControllerSettings(env: Record<string, string | undefined>): ControllerSettings {
  return toControllerSettings(loadConfig('operator', Joi.object<ControllerEnv, true>(controllerEnvSchema), env));
}

/** `argus operator`'s own HTTP endpoint (/healthz, /readyz, /metrics). */
interface OperatorHttpEnv {
  ARGUS_OPERATOR_HOST: string;
  ARGUS_OPERATOR_PORT: number;
}

const operatorHttpEnvSchema = {
  ARGUS_OPERATOR_HOST: Joi.string().default('0.0.0.0').description('Address of /healthz, /readyz and /metrics'),
  ARGUS_OPERATOR_PORT: Joi.number().integer().min(0).max(65535).default(8080),
} satisfies Joi.StrictSchemaMap<OperatorHttpEnv>;

/**
 * Everything `argus operator` reads, as three configurations: the platform's, what the controllers decide with, and
 * the kubernetes driver's (plus the operator's own HTTP endpoint).
 */
export interface ClusterOperatorConfig {
  platform: PlatformConfig;
  controllers: ControllerSettings;
  kubernetes: KubernetesSettings;
  http: { host: string; port: number };
}

/** Reads and validates `argus operator`'s settings; typos under its own prefixes are refused. */
export function loadClusterOperatorConfig(env: Record<string, string | undefined>): ClusterOperatorConfig {
  const value = loadConfig(
    'operator',
    Joi.object<PlatformEnv & ControllerEnv & KubernetesEnv & OperatorHttpEnv>({
      ...platformEnvSchema,
      ...controllerEnvSchema,
      ...kubernetesEnvSchema,
      ...operatorHttpEnvSchema,
    }),
    env,
    [...KUBERNETES_ENV_PREFIXES, 'ARGUS_OPERATOR_'],
  );
  return {
    platform: toPlatformConfig(value),
    controllers: toControllerSettings(value),
    kubernetes: toKubernetesSettings(value),
    http: { host: value.ARGUS_OPERATOR_HOST, port: value.ARGUS_OPERATOR_PORT },
  };
}

/** `argus worker`'s own variables as `workerEnvSchema` validates them. */
interface WorkerEnv {
  KUBECONFIG?: string;
  JOB_COMPLETION_INDEX?: number;
}

/** What `argus worker` reads besides its worker's own settings. */
export const workerEnvSchema = {
  KUBECONFIG: Joi.string(),
  JOB_COMPLETION_INDEX: Joi.number().integer().min(0).description('Set by the Job controller in Indexed mode'),
} satisfies Joi.StrictSchemaMap<WorkerEnv>;

/** `argus worker`'s own settings. */
export interface WorkerSettings {
  kubeconfig?: string;
  completionIndex?: number;
}

/** Reads `argus worker`'s own settings (the worker's service settings are read by the worker's starter). */
export function loadWorkerSettings(env: Record<string, string | undefined>): WorkerSettings {
  const value = loadConfig('worker', Joi.object<WorkerEnv, true>(workerEnvSchema), env);
  return { kubeconfig: value.KUBECONFIG, completionIndex: value.JOB_COMPLETION_INDEX };
}
