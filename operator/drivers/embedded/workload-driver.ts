import type { AnyResource } from '../../api/index.js';
import type { Worker, WorkloadDriver, WorkloadOwner, WorkloadSpec, WorkloadStatus } from '../../ports/index.js';

/** Options of the embedded workload driver. */
export interface EmbeddedWorkloadDriverOptions {
  /** Delay before a failed shard runs again, by failures so far (default: 1 s doubling up to 60 s). */
  retryDelayMs?: (failures: number) => number;
  /** Told about every failed shard attempt (the driver retries or fails the workload; it never throws it). */
  onShardError?: (owner: WorkloadOwner, index: number, error: unknown) => void;
}

interface Workload {
  owner: WorkloadOwner;
  uid?: string;
  spec: WorkloadSpec;
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

/**
 * Workloads as in-process tasks: each of `completions` shards calls the registered worker (at most `parallelism` at
 * once) with an AbortSignal; a shard that throws runs again after a back-off until the workload has failed more than
 * `backoffLimit` times (as a batch/v1 Job counts), then the workload fails and its other shards are aborted. A
 * workload whose worker is not registered yet waits (active 0) and starts when it is. State lives in memory only:
 * after a restart there is none, and the controller ensures the workload again.
 */
export class EmbeddedWorkloadDriver implements WorkloadDriver {
  private readonly workers = new Map<string, Worker>();
  private readonly workloads = new Map<string, Workload>();
  private readonly listeners = new Set<(owner: WorkloadOwner) => void>();
  /** Shards of removed workloads that have not settled yet (close waits for them). */
  private readonly leaving = new Set<Promise<void>>();
  private readonly retryDelayMs: (failures: number) => number;
  private closed = false;

  constructor(private readonly options: EmbeddedWorkloadDriverOptions = {}) {
    this.retryDelayMs = options.retryDelayMs ?? defaultRetryDelay;
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
    const workload: Workload = {
      owner: ownerOf(owner),
      uid: owner.metadata.uid,
      spec: { ...spec },
      abort: new AbortController(),
      waiting: Array.from({ length: spec.completions }, (_, i) => i),
      active: 0,
      succeeded: 0,
      failed: 0,
      retryTimers: new Set(),
      running: new Set(),
    };
    this.workloads.set(key, workload);
    this.pump(workload);
  }

  async inspect(owner: AnyResource): Promise<WorkloadStatus | undefined> {
    const workload = this.workloads.get(keyOf(owner));
    if (!workload || workload.uid !== owner.metadata.uid) return undefined;
    const registered = this.workers.has(workload.spec.worker);
    return {
      active: workload.active,
      // A task runs its worker as soon as it starts: every active shard is a running worker.
      ready: workload.active,
      ...(registered || workload.succeeded === workload.spec.completions
        ? {}
        : {
            waiting: {
              reason: 'WorkerNotRegistered',
              message: `no worker named "${workload.spec.worker}" is registered in this process`,
            },
          }),
      succeeded: workload.succeeded,
      failed: workload.failed,
      complete: workload.succeeded === workload.spec.completions,
      ...(workload.failure ? { failure: { ...workload.failure } } : {}),
      ...(workload.startTime ? { startTime: workload.startTime } : {}),
    };
  }

  async remove(owner: AnyResource): Promise<void> {
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

function keyOf(owner: AnyResource): string {
  return `${owner.kind}/${owner.metadata.namespace}/${owner.metadata.name}`;
}

function ownerOf(owner: AnyResource): WorkloadOwner {
  return { kind: owner.kind, namespace: owner.metadata.namespace, name: owner.metadata.name };
}
