import { readFileSync } from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import { keysRule, parseApiKeyList, readApiKeysFile } from './api-keys.js';
import type { SettingsScope } from './settings-scope.js';

/** The shared settings as `platformEnvSchema` validates them (defaults applied), before paths are resolved. */
export interface PlatformEnv {
  ARGUS_DATA_DIR: string;
  ARGUS_MODELS_DIR: string;
  ARGUS_ORT_PROVIDER: 'cpu' | 'cuda';
  ARGUS_ORT_THREADS: number;
  ARGUS_ORT_ISOLATION: 'worker' | 'main';
  ARGUS_LOG_LEVEL: 'error' | 'warn' | 'info' | 'http' | 'debug';
  ARGUS_LOG_FORMAT: 'auto' | 'json' | 'text';
  ARGUS_SHUTDOWN_GRACE_SECONDS: number;
  ARGUS_CONTROL_PLANE: 'embedded' | 'kubernetes';
  ARGUS_NAMESPACE?: string;
  ARGUS_REDIS_URL?: string;
  ARGUS_API_KEYS?: string;
  ARGUS_API_KEYS_FILE?: string;
}

/**
 * Settings every Argus process shares (data and model directories, inference runtime, logging). Service config
 * schemas spread `platformEnvSchema` into their own so that each service still reads the environment in one place.
 */
export const platformEnvSchema = {
  ARGUS_DATA_DIR: Joi.string().default('.data').description('Root of embedded state: media, vectors, snapshots'),
  ARGUS_MODELS_DIR: Joi.string().default('.models').description('Directory of model folders (manifest.json + ONNX)'),
  ARGUS_ORT_PROVIDER: Joi.string().valid('cpu', 'cuda').default('cpu').description('onnxruntime execution provider'),
  ARGUS_ORT_THREADS: Joi.number().integer().min(1).max(256).default(2).description('onnxruntime intra-op threads'),
  ARGUS_ORT_ISOLATION: Joi.string()
    .valid('worker', 'main')
    .default('worker')
    .description('Where sessions run: a worker thread (keeps HTTP responsive) or the main thread'),
  ARGUS_LOG_LEVEL: Joi.string().valid('error', 'warn', 'info', 'http', 'debug').default('info'),
  ARGUS_LOG_FORMAT: Joi.string().valid('auto', 'json', 'text').default('auto'),
  ARGUS_SHUTDOWN_GRACE_SECONDS: Joi.number()
    .min(1)
    .max(3600)
    .default(20)
    .description(
      'Time from SIGTERM to exit: in-flight work is aborted and rolled back, resources released (below the 30 s Kubernetes gives)',
    ),
  ARGUS_CONTROL_PLANE: Joi.string()
    .valid('embedded', 'kubernetes')
    .default('embedded')
    .description('Where resources live: embedded (store under the data dir, workloads in-process) or kubernetes'),
  ARGUS_NAMESPACE: Joi.string()
    .pattern(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
    .max(63)
    .description("Namespace of the resources services create (default: the pod's namespace, else default)"),
  ARGUS_REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .description('Redis holding the state every replica shares (unset: this process only, the embedded default)'),
  ARGUS_API_KEYS: Joi.string()
    .custom(keysRule(parseApiKeyList))
    .description(
      'Comma-separated bearer keys every API request must carry (health, metrics and docs exempt); the first is sent to other Argus services',
    ),
  ARGUS_API_KEYS_FILE: Joi.string()
    .custom(keysRule(readApiKeysFile, 'ARGUS_API_KEYS'))
    .description('A file with one bearer key per line (a mounted Secret), instead of ARGUS_API_KEYS'),
} satisfies Joi.StrictSchemaMap<PlatformEnv>;

/** The platform's settings: every ARGUS_* name is the platform's, so a typo there (ARGUS_DATA_DRI) is refused. */
export const platformSettings: SettingsScope = { schema: Joi.object(platformEnvSchema), prefixes: ['ARGUS_'] };

/** The shared settings after validation, paths made absolute. */
export interface PlatformConfig {
  dataDir: string;
  modelsDir: string;
  provider: 'cpu' | 'cuda';
  threads: number;
  isolation: 'worker' | 'main';
  logLevel: string;
  logJson?: boolean;
  /** From SIGTERM to exit, at the latest. */
  shutdownGraceMs: number;
  /** Where resources live and workloads run. */
  controlPlane: 'embedded' | 'kubernetes';
  /** Namespace of the resources the services create. */
  namespace: string;
  /** Redis of the state every replica of a service shares (ARGUS_REDIS_URL); undefined: in memory, one process. */
  redisUrl?: string;
  /**
   * The bearer keys every API request must carry (ARGUS_API_KEYS or ARGUS_API_KEYS_FILE); empty: none needed. The
   * first is the one this process sends to other Argus services.
   */
  apiKeys: readonly string[];
}

/** Where Kubernetes mounts the namespace of a pod's service account. */
const POD_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

function podNamespace(): string | undefined {
  try {
    return readFileSync(POD_NAMESPACE_FILE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The keys of the validated settings (the file read again: the schema only checked it). */
function apiKeysOf(list?: string, file?: string): readonly string[] {
  if (list !== undefined) return parseApiKeyList(list);
  return file === undefined ? [] : readApiKeysFile(file);
}

/**
 * Maps validated ARGUS_* values (a PlatformEnv) onto PlatformConfig. Typed loosely because operator, dataprep,
 * camera-rules, caption-runs and bin still pass loadConfig's untyped result; it takes PlatformEnv once they declare
 * their env types.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above: the untyped callers outside services/lib
export function toPlatformConfig(env: Record<string, any>): PlatformConfig {
  return {
    dataDir: path.resolve(env.ARGUS_DATA_DIR),
    modelsDir: path.resolve(env.ARGUS_MODELS_DIR),
    provider: env.ARGUS_ORT_PROVIDER,
    threads: env.ARGUS_ORT_THREADS,
    isolation: env.ARGUS_ORT_ISOLATION,
    logLevel: env.ARGUS_LOG_LEVEL,
    logJson: env.ARGUS_LOG_FORMAT === 'auto' ? undefined : env.ARGUS_LOG_FORMAT === 'json',
    shutdownGraceMs: Math.round(env.ARGUS_SHUTDOWN_GRACE_SECONDS * 1000),
    controlPlane: env.ARGUS_CONTROL_PLANE,
    namespace: env.ARGUS_NAMESPACE ?? podNamespace() ?? 'default',
    redisUrl: env.ARGUS_REDIS_URL,
    apiKeys: apiKeysOf(env.ARGUS_API_KEYS, env.ARGUS_API_KEYS_FILE),
  };
}
