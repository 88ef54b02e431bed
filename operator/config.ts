import Joi from 'joi';
import { envBoolean, loadConfig, platformEnvSchema, toPlatformConfig } from '../services/lib/config/index.js';
import type { PlatformConfig } from '../services/lib/config/index.js';
import type { WorkerPodTemplate } from './drivers/kubernetes/index.js';

/** Operator settings: how IngestJob workloads are shaped, how long finished jobs are kept, how often to resync. */
export interface OperatorConfig {
  ingest: {
    /** Worker shards per job (capped at the job's item count); each takes every Nth item. */
    parallelism: number;
    /** Failed worker attempts a job tolerates before its unprocessed items fail (batch/v1 Job semantics). */
    backoffLimit: number;
    /** How long a job may wait for its first worker before it fails (spec.pendingDeadlineSeconds overrides). */
    pendingDeadlineSeconds: number;
  };
  retention: {
    /** Finished IngestJobs kept per namespace (the newest ones). */
    count: number;
    /** Finished IngestJobs are deleted this long after they finished. */
    maxAgeSeconds: number;
  };
  /** Every resource is reconciled again at this interval, whatever events were seen. */
  resyncSeconds: number;
}

/** The operator's environment variables (joi; also spread into schemas that validate the same environment). */
export const operatorEnvSchema = {
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
  ARGUS_OPERATOR_RESYNC_SECONDS: Joi.number()
    .integer()
    .min(1)
    .max(86400)
    .default(300)
    .description('Interval of the periodic full reconcile'),
};

/** Maps validated variables onto OperatorConfig. */
export function toOperatorConfig(env: Record<string, any>): OperatorConfig {
  return {
    ingest: {
      parallelism: env.ARGUS_INGEST_PARALLELISM,
      backoffLimit: env.ARGUS_INGEST_BACKOFF_LIMIT,
      pendingDeadlineSeconds: env.ARGUS_INGEST_PENDING_DEADLINE_SECONDS,
    },
    retention: { count: env.ARGUS_JOB_RETENTION_COUNT, maxAgeSeconds: env.ARGUS_JOB_RETENTION_SECONDS },
    resyncSeconds: env.ARGUS_OPERATOR_RESYNC_SECONDS,
  };
}

/** Reads and validates the operator settings (every problem listed in a ConfigError). */
export function loadOperatorConfig(env: Record<string, string | undefined>): OperatorConfig {
  return toOperatorConfig(loadConfig('operator', Joi.object(operatorEnvSchema), env));
}

const jsonValue = (schema: Joi.Schema) =>
  Joi.any().custom((value: unknown, helpers) => {
    let parsed: unknown;
    try {
      parsed = typeof value === 'string' ? JSON.parse(value) : value;
    } catch {
      return helpers.message({ custom: '{{#label}} must be JSON' });
    }
    const { error, value: valid } = schema.validate(parsed);
    if (error) return helpers.message({ custom: `{{#label}}: ${error.message}` });
    return valid;
  });

const quantities = Joi.object().pattern(
  Joi.string(),
  Joi.string().pattern(/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE])?$/, 'quantity'),
);

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Settings of `argus operator` against a cluster: worker pod placement, watch scope, leader election, HTTP port. */
export const clusterOperatorEnvSchema = {
  KUBECONFIG: Joi.string().description('Kubeconfig file (default: in-cluster config in a pod, else ~/.kube/config)'),
  // Empty is all namespaces, as in controller-runtime (a chart or manifest often sets the variable to "").
  WATCH_NAMESPACE: Joi.string()
    .allow('')
    .pattern(DNS_LABEL)
    .max(63)
    .description('Reconcile this namespace only (a Role suffices); all namespaces when unset or empty'),
  ARGUS_WORKER_IMAGE: Joi.string()
    .required()
    .description(
      'Image of the worker pods (the argus image); required, also when the operator runs out of the cluster',
    ),
  ARGUS_WORKER_COMMAND: Joi.string()
    .default('argus')
    .description('The argus command in the image (space-separated); "worker <name> --job ..." is appended'),
  ARGUS_WORKER_IMAGE_PULL_POLICY: Joi.string().valid('Always', 'IfNotPresent', 'Never'),
  ARGUS_WORKER_NODE_SELECTOR: jsonValue(Joi.object().pattern(Joi.string(), Joi.string()))
    .default({})
    .description('JSON object: node labels worker pods need, e.g. {"nvidia.com/gpu.present":"true"}'),
  ARGUS_WORKER_TOLERATIONS: jsonValue(
    Joi.array().items(
      Joi.object({
        key: Joi.string(),
        operator: Joi.string().valid('Exists', 'Equal'),
        value: Joi.string().allow(''),
        effect: Joi.string().valid('NoSchedule', 'PreferNoSchedule', 'NoExecute'),
        tolerationSeconds: Joi.number().integer(),
      }),
    ),
  )
    .default([])
    .description(
      'JSON array of tolerations, e.g. [{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]',
    ),
  ARGUS_WORKER_RESOURCES: jsonValue(Joi.object({ limits: quantities, requests: quantities }))
    .default({})
    .description('JSON resources of the worker container, e.g. {"limits":{"nvidia.com/gpu":"1"}}'),
  ARGUS_WORKER_SERVICE_ACCOUNT: Joi.string()
    .pattern(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/)
    .description('ServiceAccount of worker pods (needs INGEST_WORKER_RULES)'),
  ARGUS_WORKER_ENV_FROM: Joi.string()
    .pattern(
      /^((configMap|secret):[a-z0-9]([-a-z0-9.]*[a-z0-9])?)(,(configMap|secret):[a-z0-9]([-a-z0-9.]*[a-z0-9])?)*$/,
    )
    .description('ConfigMaps/Secrets holding the worker service config: configMap:<name>,secret:<name>'),
  ARGUS_WORKER_TTL_SECONDS: Joi.number()
    .integer()
    .min(0)
    .default(3600)
    .description('Finished worker Jobs are removed this long after they finish'),
  ARGUS_LEADER_ELECTION: envBoolean().default(true).description('Run for leader on a Lease (off: lead at once)'),
  ARGUS_LEADER_ELECTION_LEASE_NAME: Joi.string().pattern(DNS_LABEL).default('argus-operator'),
  ARGUS_LEADER_ELECTION_LEASE_DURATION_SECONDS: Joi.number().min(0.1).default(15),
  ARGUS_LEADER_ELECTION_RENEW_DEADLINE_SECONDS: Joi.number().min(0.05).default(10),
  ARGUS_LEADER_ELECTION_RETRY_PERIOD_SECONDS: Joi.number().min(0.01).default(2),
  ARGUS_POD_NAME: Joi.string().description("This replica's identity in the Lease (downward API; default hostname)"),
  ARGUS_OPERATOR_HOST: Joi.string().default('0.0.0.0').description('Address of /healthz, /readyz and /metrics'),
  ARGUS_OPERATOR_PORT: Joi.number().integer().min(0).max(65535).default(8080),
};

/** The cluster settings after validation. */
export interface ClusterSettings {
  kubeconfig?: string;
  watchNamespace?: string;
  worker: WorkerPodTemplate;
  leaderElection: {
    enabled: boolean;
    leaseName: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
    identity?: string;
  };
  http: { host: string; port: number };
}

/** Maps validated cluster variables onto ClusterSettings. */
export function toClusterSettings(env: Record<string, any>): ClusterSettings {
  const envFrom = (env.ARGUS_WORKER_ENV_FROM ?? '')
    .split(',')
    .filter(Boolean)
    .map((entry: string) => {
      const [kind, name] = entry.split(':');
      return kind === 'secret' ? { secretRef: { name } } : { configMapRef: { name } };
    });
  return {
    kubeconfig: env.KUBECONFIG,
    watchNamespace: env.WATCH_NAMESPACE || undefined,
    worker: {
      image: env.ARGUS_WORKER_IMAGE,
      command: env.ARGUS_WORKER_COMMAND.split(/\s+/).filter(Boolean),
      imagePullPolicy: env.ARGUS_WORKER_IMAGE_PULL_POLICY,
      nodeSelector: env.ARGUS_WORKER_NODE_SELECTOR,
      tolerations: env.ARGUS_WORKER_TOLERATIONS,
      resources: env.ARGUS_WORKER_RESOURCES,
      serviceAccountName: env.ARGUS_WORKER_SERVICE_ACCOUNT,
      envFrom,
      ttlSecondsAfterFinished: env.ARGUS_WORKER_TTL_SECONDS,
    },
    leaderElection: {
      enabled: env.ARGUS_LEADER_ELECTION,
      leaseName: env.ARGUS_LEADER_ELECTION_LEASE_NAME,
      leaseDurationMs: Math.round(env.ARGUS_LEADER_ELECTION_LEASE_DURATION_SECONDS * 1000),
      renewDeadlineMs: Math.round(env.ARGUS_LEADER_ELECTION_RENEW_DEADLINE_SECONDS * 1000),
      retryPeriodMs: Math.round(env.ARGUS_LEADER_ELECTION_RETRY_PERIOD_SECONDS * 1000),
      identity: env.ARGUS_POD_NAME,
    },
    http: { host: env.ARGUS_OPERATOR_HOST, port: env.ARGUS_OPERATOR_PORT },
  };
}

/** Everything `argus operator` reads: platform, controller and cluster settings. */
export interface ClusterOperatorConfig {
  platform: PlatformConfig;
  operator: OperatorConfig;
  cluster: ClusterSettings;
}

/** Reads and validates `argus operator`'s settings; typos under its own prefixes are refused. */
export function loadClusterOperatorConfig(env: Record<string, string | undefined>): ClusterOperatorConfig {
  const value = loadConfig<Record<string, any>>(
    'operator',
    Joi.object({ ...platformEnvSchema, ...operatorEnvSchema, ...clusterOperatorEnvSchema }),
    env,
    ['ARGUS_WORKER_', 'ARGUS_LEADER_ELECTION_', 'ARGUS_OPERATOR_'],
  );
  return { platform: toPlatformConfig(value), operator: toOperatorConfig(value), cluster: toClusterSettings(value) };
}

/** What `argus worker` reads besides its worker's own settings. */
export const workerEnvSchema = {
  KUBECONFIG: Joi.string(),
  JOB_COMPLETION_INDEX: Joi.number().integer().min(0).description('Set by the Job controller in Indexed mode'),
};

/** `argus worker`'s own settings. */
export interface WorkerSettings {
  kubeconfig?: string;
  completionIndex?: number;
}

/** Reads `argus worker`'s own settings (the worker's service settings are read by the worker's starter). */
export function loadWorkerSettings(env: Record<string, string | undefined>): WorkerSettings {
  const value = loadConfig<Record<string, any>>('worker', Joi.object(workerEnvSchema), env);
  return { kubeconfig: value.KUBECONFIG, completionIndex: value.JOB_COMPLETION_INDEX };
}
