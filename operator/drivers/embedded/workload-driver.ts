import type { AnyResource } from '../../api/index.js';
import type {
  BatchWorkloadSpec,
  Worker,
  WorkloadDriver,
  WorkloadMode,
  WorkloadOwner,
  WorkloadSpec,
  WorkloadStatus,
} from '../../ports/index.js';

/** Options of the embedded workload driver. */
export interface EmbeddedWorkloadDriverOptions {
  /** Delay before a failed shard runs again, by failures so far (default: 1 s doubling up to 60 s). */
  retryDelayMs?: (failures: number) => number;
  /** Told about every failed shard attempt (the driver retries or fails the workload; it never throws it). */
  onShardError?: (owner: WorkloadOwner, index: number, error: unknown) => void;
  /**
   * Long-running workloads: delay before a replica that ended runs again, by restarts in a row (default: 1 s doubling
   * up to 60 s, as the kubelet's back-off); a run that lasted `restartResetMs` resets the count.
   */
  restartDelayMs?: (restartsInRow: number) => number;
  /** A long-running replica that ran this long before it ended restarts without back-off history (default 10 min). */
  restartResetMs?: number;
  /** The clock of the restart reset (tests move it). */
  now?: () => number;
}

interface Workload {
  owner: WorkloadOwner;
  uid?: string;
  /** Shards as a batch spec (a long-running one: `replicas` shards, never done, never failing). */
  spec: BatchWorkloadSpec;
  longRunning: boolean;
  /** Long-running: restarts so far, in a row (for the back-off), and why the last run ended. */
  restarts: number;
  restartsInRow: number;
  lastError?: string;
  abort: AbortController;
  /** Shard indexes waiting to run (first attempts and retries). */
  waiting: number[];
  active: number;
  succeeded: number;
  failed: number;
  startTime?: string;
  failure?: { reason: string; message: string };
  retryTimers: Set<NodeJS.Timeout>;
  running: Set<Promise<void>>;
}

const defaultRetryDelay = (failures: number) => Math.min(60_000, 1000 * 2 ** (failures - 1));
/** Longest message of a failure kept as lastError. */
const LAST_ERROR_MAX = 1024;

/**
 * Workloads as in-process tasks: each of `completions` shards calls the registered worker (at most `parallelism` at
 * once) with an AbortSignal; a shard that throws runs again after a back-off until the workload has failed more than
 * `backoffLimit` times (as a batch/v1 Job counts), then the workload fails and its other shards are aborted. A
 * long-running workload runs `replicas` tasks until it is removed: a task that throws (or returns while it should run)
 * is started again after a bounded back-off, counted in `restarts` with its error in `lastError`. A workload whose
 * worker is not registered yet waits (active 0) and starts when it is. State lives in memory only: after a restart
 * there is none, and the controller ensures the workload again.
 */
export class EmbeddedWorkloadDriver implements WorkloadDriver {
  private readonly workers = new Map<string, Worker>();
  private readonly workloads = new Map<string, Workload>();
  private readonly listeners = new Set<(owner: WorkloadOwner) => void>();
  /** Shards of removed workloads that have not settled yet (close waits for them). */
  private readonly leaving = new Set<Promise<void>>();
  private readonly retryDelayMs: (failures: number) => number;
  private readonly restartDelayMs: (restartsInRow: number) => number;
  private readonly now: () => number;
  private closed = false;

  constructor(private readonly options: EmbeddedWorkloadDriverOptions = {}) {
    this.retryDelayMs = options.retryDelayMs ?? defaultRetryDelay;
    this.restartDelayMs = options.restartDelayMs ?? defaultRetryDelay;
    this.now = options.now ?? Date.now;
  }

  /** Makes `worker` the code of workloads named `name`; workloads waiting for it start now. */
  register(name: string, worker: Worker): void {
    if (this.workers.has(name)) throw new Error(`a worker named "${name}" is already registered`);
    this.workers.set(name, worker);
    for (const workload of this.workloads.values()) if (workload.spec.worker === name) this.pump(workload);
  }

  async ensure(owner: AnyResource, spec: WorkloadSpec): Promise<void> {
    if (this.closed) throw new Error('the workload driver is closed');
    const key = keyOf(owner);
    const existing = this.workloads.get(key);
    if (existing && existing.uid === owner.metadata.uid) return;
    if (existing) this.discard(key, existing);
    const longRunning = spec.mode === 'long-running';
    const shards: BatchWorkloadSpec =
      spec.mode === 'long-running'
        ? { worker: spec.worker, completions: spec.replicas, parallelism: spec.replicas, backoffLimit: Infinity }
        : { ...spec };
    const workload: Workload = {
      owner: ownerOf(owner),
      uid: owner.metadata.uid,
      spec: shards,
      longRunning,
      restarts: 0,
      restartsInRow: 0,
      abort: new AbortController(),
      waiting: Array.from({ length: shards.completions }, (_, i) => i),
      active: 0,
      succeeded: 0,
      failed: 0,
      retryTimers: new Set(),
      running: new Set(),
    };
    this.workloads.set(key, workload);
    this.pump(workload);
  }

  /** The workload of `owner` (one per owner embedded, whatever its mode). */
  async inspect(owner: AnyResource, _mode?: WorkloadMode): Promise<WorkloadStatus | undefined> {
    const workload = this.workloads.get(keyOf(owner));
    if (!workload || workload.uid !== owner.metadata.uid) return undefined;
    const registered = this.workers.has(workload.spec.worker);
    if (workload.longRunning) {
      return {
        active: workload.active,
        ready: workload.active,
        ...(registered ? {} : { waiting: notRegistered(workload.spec.worker) }),
        succeeded: 0,
        failed: 0,
        complete: false,
        restarts: workload.restarts,
        ...(workload.lastError !== undefined ? { lastError: workload.lastError } : {}),
        ...(workload.startTime ? { startTime: workload.startTime } : {}),
      };
    }
    return {
      active: workload.active,
      // A task runs its worker as soon as it starts: every active shard is a running worker.
      ready: workload.active,
      ...(registered || workload.succeeded === workload.spec.completions
        ? {}
        : { waiting: notRegistered(workload.spec.worker) }),
      succeeded: workload.succeeded,
      failed: workload.failed,
      complete: workload.succeeded === workload.spec.completions,
      ...(workload.failure ? { failure: { ...workload.failure } } : {}),
      ...(workload.startTime ? { startTime: workload.startTime } : {}),
    };
  }

  async remove(owner: AnyResource, _mode?: WorkloadMode): Promise<void> {
    const key = keyOf(owner);
    const workload = this.workloads.get(key);
    if (workload) this.discard(key, workload);
  }

  onChange(listener: (owner: WorkloadOwner) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Aborts every workload and waits until each of its shards has returned. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [key, workload] of this.workloads) this.discard(key, workload);
    this.listeners.clear();
    await Promise.all([...this.leaving]);
  }

  private discard(key: string, workload: Workload): void {
    this.workloads.delete(key);
    workload.abort.abort(new Error('the workload was removed'));
    for (const timer of workload.retryTimers) clearTimeout(timer);
    workload.retryTimers.clear();
    workload.waiting = [];
    for (const shard of workload.running) {
      this.leaving.add(shard);
      void shard.finally(() => this.leaving.delete(shard));
    }
  }

  private pump(workload: Workload): void {
    const worker = this.workers.get(workload.spec.worker);
    if (!worker || workload.abort.signal.aborted || workload.failure) return;
    while (workload.active < workload.spec.parallelism && workload.waiting.length > 0) {
      const index = workload.waiting.shift() as number;
      workload.active++;
      workload.startTime ??= new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const shard = this.runShard(workload, worker, index);
      workload.running.add(shard);
      void shard.finally(() => workload.running.delete(shard));
    }
    this.notify(workload);
  }

  private async runShard(workload: Workload, worker: Worker, index: number): Promise<void> {
    const { signal } = workload.abort;
    const { namespace, name } = workload.owner;
    if (workload.longRunning) return this.runReplica(workload, worker, index);
    try {
      await Promise.resolve().then(() =>
        worker({ namespace, name, index, completions: workload.spec.completions, signal }),
      );
      // A shard that returns after its workload was aborted has not finished its share.
      if (!signal.aborted) workload.succeeded++;
    } catch (error) {
      if (!signal.aborted) this.shardFailed(workload, index, error);
    } finally {
      workload.active--;
    }
    if (!signal.aborted) this.pump(workload);
  }

  /** One run of a long-running replica (index 0 of 1 for the worker); when it ends it is started again after a back-off. */
  private async runReplica(workload: Workload, worker: Worker, index: number): Promise<void> {
    const { signal } = workload.abort;
    const { namespace, name } = workload.owner;
    const started = this.now();
    let failure: unknown;
    let threw = false;
    try {
      await Promise.resolve().then(() => worker({ namespace, name, index: 0, completions: 1, signal }));
    } catch (error) {
      threw = true;
      failure = error;
    } finally {
      workload.active--;
    }
    if (signal.aborted) return;
    if (threw) this.options.onShardError?.(workload.owner, index, failure);
    if (this.now() - started >= (this.options.restartResetMs ?? 600_000)) workload.restartsInRow = 0;
    workload.restarts++;
    workload.restartsInRow++;
    workload.lastError = threw
      ? (failure instanceof Error ? failure.message : String(failure)).slice(0, LAST_ERROR_MAX)
      : 'the worker returned while its workload should run';
    const timer = setTimeout(() => {
      workload.retryTimers.delete(timer);
      workload.waiting.push(index);
      this.pump(workload);
    }, this.restartDelayMs(workload.restartsInRow));
    workload.retryTimers.add(timer);
    this.notify(workload);
  }

  private shardFailed(workload: Workload, index: number, error: unknown): void {
    workload.failed++;
    this.options.onShardError?.(workload.owner, index, error);
    if (workload.failed > workload.spec.backoffLimit) {
      const reason = error instanceof Error ? error.message : String(error);
      workload.failure = {
        reason: 'BackoffLimitExceeded',
        message: `the worker failed ${workload.failed} times (backoffLimit ${workload.spec.backoffLimit}); last failure, shard ${index}: ${reason}`,
      };
      workload.abort.abort(new Error('the workload failed'));
      workload.waiting = [];
      for (const timer of workload.retryTimers) clearTimeout(timer);
      workload.retryTimers.clear();
      this.notify(workload);
      return;
    }
    const timer = setTimeout(() => {
      workload.retryTimers.delete(timer);
      workload.waiting.push(index);
      this.pump(workload);
    }, this.retryDelayMs(workload.failed));
    workload.retryTimers.add(timer);
  }

  private notify(workload: Workload): void {
    for (const listener of this.listeners) listener({ ...workload.owner });
  }
}

function notRegistered(worker: string): { reason: string; message: string } {
  return { reason: 'WorkerNotRegistered', message: `no worker named "${worker}" is registered in this process` };
}

function keyOf(owner: AnyResource): string {
  return `${owner.kind}/${owner.metadata.namespace}/${owner.metadata.name}`;
}

function ownerOf(owner: AnyResource): WorkloadOwner {
  return { kind: owner.kind, namespace: owner.metadata.namespace, name: owner.metadata.name };
}
