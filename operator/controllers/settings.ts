/**
 * What the controllers decide with: how IngestJob workloads are shaped, how long a job may wait for its workers, how
 * long finished jobs and caption runs are kept, how often everything is reconciled again. The operator's configuration module reads
 * them from the environment; the controllers see only this shape.
 */
export interface ControllerSettings {
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
  /** Finished (Stopped or Failed) CaptionRuns: how many are kept per namespace, and how long. */
  captionRunRetention: {
    /** Finished CaptionRuns kept per namespace (the most recently finished ones). */
    count: number;
    /** Finished CaptionRuns are deleted this long after `status.finishedTime`. */
    maxAgeSeconds: number;
  };
  /** Every resource is reconciled again at this interval, whatever events were seen. */
  resyncSeconds: number;
}
