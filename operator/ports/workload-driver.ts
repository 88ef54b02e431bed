import type { AnyResource, KindName } from '../api/index.js';

/** Which resource a workload belongs to. */
export interface WorkloadOwner {
  kind: KindName;
  namespace: string;
  name: string;
}

/**
 * How a workload lives: `batch` runs to completion (a batch/v1 Job in the cluster), `long-running` keeps its
 * replicas running until it is removed (an apps/v1 Deployment in the cluster, a restarted task embedded).
 */
export type WorkloadMode = 'batch' | 'long-running';

/**
 * A run-to-completion workload, as a controller wants it. `worker` names the worker entry point (`argus worker <name>`
 * in the cluster, a registered function embedded); `completions` indexed shards run it, at most `parallelism` at once,
 * each retried up to `backoffLimit` times in all before the workload fails.
 */
export interface BatchWorkloadSpec {
  mode?: 'batch';
  worker: string;
  completions: number;
  parallelism: number;
  backoffLimit: number;
}

/**
 * A long-running workload: `replicas` copies of the worker run until the workload is removed; one that ends (throws,
 * or returns while it should run) is started again after a back-off. Each is called with index 0 of 1.
 */
export interface LongRunningWorkloadSpec {
  mode: 'long-running';
  worker: string;
  replicas: number;
}

/** The workload of a resource, as a controller wants it. */
export type WorkloadSpec = BatchWorkloadSpec | LongRunningWorkloadSpec;

/**
 * What a workload is doing (a batch/v1 Job's or an apps/v1 Deployment's status, or the embedded tasks'). For a
 * long-running workload: `active` counts the replicas that exist, `ready` those whose worker runs (a Deployment's
 * available replicas), `waiting` says why none runs yet (also `ProgressDeadlineExceeded`), and `complete` and
 * `failure` are never set (it restarts instead).
 */
export interface WorkloadStatus {
  /** Shards started and not finished, including those whose worker does not run yet (a Job's Pending pods). */
  active: number;
  /** Shards whose worker really runs now (a Job's ready or running pods, the embedded tasks that run). */
  ready: number;
  /** Why no worker runs yet, when the driver can tell (no node fits, image pull, pod refused by admission, …). */
  waiting?: { reason: string; message: string };
  /** Shards finished successfully. */
  succeeded: number;
  /** Failed attempts so far. */
  failed: number;
  /** Every shard succeeded. */
  complete: boolean;
  /** Retries are exhausted (or the workload failed otherwise): no shard will run again. */
  failure?: { reason: string; message: string };
  startTime?: string;
  /** Long-running: times a worker was started again after it ended (container restarts, embedded task restarts). */
  restarts?: number;
  /** Long-running: why the worker last ended, when it did (its error, or a container's termination). */
  lastError?: string;
}

/**
 * Makes, inspects and removes the workload of a resource. The kubernetes driver uses an indexed batch/v1 Job (batch)
 * or an apps/v1 Deployment (long-running) owned by the resource (garbage-collected with it); the embedded driver runs
 * in-process tasks with an AbortSignal. `mode` defaults to `batch`.
 */
export interface WorkloadDriver {
  /** Creates the workload when there is none (idempotent: an existing one is left as it is). */
  ensure(owner: AnyResource, spec: WorkloadSpec): Promise<void>;
  /** The workload's status, or undefined when there is none (`mode`: which kind of workload to look for). */
  inspect(owner: AnyResource, mode?: WorkloadMode): Promise<WorkloadStatus | undefined>;
  /** Stops and removes the workload (no-op when there is none). */
  remove(owner: AnyResource, mode?: WorkloadMode): Promise<void>;
  /**
   * Calls `listener` with the owner whenever a workload's status may have changed (a shard started, finished or
   * failed), so that controllers reconcile at once; returns a function that stops the calls. Optional: without it
   * controllers see workload changes at their next resync only.
   */
  onChange?(listener: (owner: WorkloadOwner) => void): () => void;
}

/** What a worker shard receives: which resource, which shard, and a signal that fires when it must stop. */
export interface WorkerContext {
  namespace: string;
  name: string;
  /** This shard's index, 0..completions-1 (JOB_COMPLETION_INDEX in the cluster). */
  index: number;
  completions: number;
  signal: AbortSignal;
}

/** A worker entry point: the code a workload runs. */
export type Worker = (context: WorkerContext) => Promise<void>;
