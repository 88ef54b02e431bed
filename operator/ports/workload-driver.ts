import type { AnyResource, KindName } from '../api/index.js';

/** Which resource a workload belongs to. */
export interface WorkloadOwner {
  kind: KindName;
  namespace: string;
  name: string;
}

/**
 * The workload of a resource, as a controller wants it. `worker` names the worker entry point (`argus worker <name>`
 * in the cluster, a registered function embedded); `completions` indexed shards run it, at most `parallelism` at once,
 * each retried up to `backoffLimit` times in all before the workload fails.
 */
export interface WorkloadSpec {
  worker: string;
  completions: number;
  parallelism: number;
  backoffLimit: number;
}

/** What a workload is doing (a batch/v1 Job's status, or the embedded tasks'). */
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
}

/**
 * Makes, inspects and removes the workload of a resource. The kubernetes driver uses an indexed batch/v1 Job owned by
 * the resource (garbage-collected with it); the embedded driver runs in-process tasks with an AbortSignal.
 */
export interface WorkloadDriver {
  /** Creates the workload when there is none (idempotent: an existing one is left as it is). */
  ensure(owner: AnyResource, spec: WorkloadSpec): Promise<void>;
  /** The workload's status, or undefined when there is none. */
  inspect(owner: AnyResource): Promise<WorkloadStatus | undefined>;
  /** Stops and removes the workload (no-op when there is none). */
  remove(owner: AnyResource): Promise<void>;
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
