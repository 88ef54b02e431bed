import Joi from 'joi';
import { loadConfig } from '../services/lib/config/index.js';

/** Operator settings: how IngestJob workloads are shaped, how long finished jobs are kept, how often to resync. */
export interface OperatorConfig {
  ingest: {
    /** Worker shards per job (capped at the job's item count); each takes every Nth item. */
    parallelism: number;
    /** Failed worker attempts a job tolerates before its unprocessed items fail (batch/v1 Job semantics). */
    backoffLimit: number;
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
    ingest: { parallelism: env.ARGUS_INGEST_PARALLELISM, backoffLimit: env.ARGUS_INGEST_BACKOFF_LIMIT },
    retention: { count: env.ARGUS_JOB_RETENTION_COUNT, maxAgeSeconds: env.ARGUS_JOB_RETENTION_SECONDS },
    resyncSeconds: env.ARGUS_OPERATOR_RESYNC_SECONDS,
  };
}

/** Reads and validates the operator settings (every problem listed in a ConfigError). */
export function loadOperatorConfig(env: Record<string, string | undefined>): OperatorConfig {
  return toOperatorConfig(loadConfig('operator', Joi.object(operatorEnvSchema), env));
}
