import { INGEST_WORKER, type IngestJob } from '../../api/index.js';
import type { BatchWorkloadSpec } from '../../ports/index.js';
import type { ControllerSettings } from '../settings.js';

/** The workload of an IngestJob: `parallelism` shards (never more than items), each taking every Nth item. */
export function ingestWorkload(job: IngestJob, config: ControllerSettings): BatchWorkloadSpec {
  const shards = Math.max(1, Math.min(config.ingest.parallelism, job.spec.items.length));
  return {
    worker: INGEST_WORKER,
    completions: shards,
    parallelism: shards,
    backoffLimit: config.ingest.backoffLimit,
  };
}
