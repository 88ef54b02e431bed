import type { KindName, ResourceKinds } from '../../api/index.js';
import type { ResourceStore, Watch, WorkloadDriver } from '../../ports/index.js';
import { KeyedQueue, type BackOff } from '../../../services/lib/keyed-queue/index.js';
import type { Logger } from '../../../services/lib/log/index.js';
import type { ControllerMetrics } from './metrics.js';

/** Which object a reconcile is about. */
export interface ObjectKey {
  namespace: string;
  name: string;
}

/** What a reconcile asks of the runtime. */
export interface ReconcileResult {
  /** Reconcile the object again after this many milliseconds (even without an event). */
  requeueAfterMs?: number;
}

/** A controller: how to reconcile one object of `kind`, and how to clean up after one that is gone. */
export interface ControllerOptions<K extends KindName> {
  name: string;
  kind: K;
  store: ResourceStore;
  /** Watch one namespace only (all when undefined). */
  namespace?: string;
  /** Brings the world in line with the object (which it reads itself: it may be gone). Throwing retries with back-off. */
  reconcile(key: ObjectKey, signal: AbortSignal): Promise<ReconcileResult | void>;
  /** Called once for an object the watch saw deleted, with its last state. */
  deleted?(object: ResourceKinds[K]): Promise<void>;
  /** Every object is reconciled again at this interval. */
  resyncMs: number;
  /** The driver of this kind's workloads: a change of one (a pod started, a Job failed) reconciles its owner. */
  workloads?: Pick<WorkloadDriver, 'onChange'>;
  backOff?: BackOff;
  logger: Logger;
  metrics: ControllerMetrics;
}

/**
 * The generic controller loop: watch events and external triggers become keys (`namespace/name`) on a KeyedQueue, so
 * one object is reconciled at a time, requests coalesce, and failures retry with exponential back-off; a periodic
 * resync reconciles everything again. Reconcile counts, durations, errors and the queue depth go to the metrics.
 */
export class Controller<K extends KindName> {
  private readonly queue: KeyedQueue<string>;
  private readonly requeues = new Map<string, NodeJS.Timeout>();
  private watch?: Watch;
  private unsubscribeWorkloads?: () => void;
  private resync?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: ControllerOptions<K>) {
    this.queue = new KeyedQueue<string>({
      handler: (key, signal) => this.reconcile(key, signal),
      backOff: options.backOff,
      onError: (key, error, retryInMs) =>
        options.logger.warn('reconcile failed; retrying', {
          controller: options.name,
          key,
          retryInMs,
          error: error instanceof Error ? error.message : String(error),
        }),
    });
    options.metrics.trackDepth(options.name, () => this.queue.depth);
  }

  /** Starts watching (every existing object is reconciled once), its workloads' changes and the periodic resync. */
  async start(): Promise<void> {
    const { store, kind, namespace, resyncMs, workloads } = this.options;
    this.unsubscribeWorkloads = workloads?.onChange?.((owner) => {
      if (owner.kind === kind) this.enqueue(owner);
    });
    this.watch = await store.watch(kind, namespace, (event) => {
      const key = keyOf(event.object.metadata);
      if (event.type !== 'DELETED') return this.queue.enqueue(key);
      this.clearRequeue(key);
      const deleted = this.options.deleted;
      if (!deleted) return this.queue.forget(key);
      this.queue
        .run(key, () => deleted(event.object))
        .catch((error: unknown) => this.failed(key, error))
        .finally(() => this.queue.forget(key));
    });
    this.resync = setInterval(() => void this.resyncAll(), resyncMs);
    this.resync.unref();
  }

  /** Asks for a reconcile of one object (a change the watch cannot see, such as its workload's). */
  enqueue(key: ObjectKey): void {
    if (!this.stopped) this.queue.enqueue(keyOf(key));
  }

  /** Stops watching, cancels requeues and waits for reconciles in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribeWorkloads?.();
    clearInterval(this.resync);
    for (const timer of this.requeues.values()) clearTimeout(timer);
    this.requeues.clear();
    await this.watch?.stop();
    await this.queue.close();
  }

  private async reconcile(key: string, signal: AbortSignal): Promise<void> {
    const { name, metrics } = this.options;
    const end = metrics.duration.startTimer({ controller: name });
    this.clearRequeue(key);
    try {
      const result = await this.options.reconcile(parseKey(key), signal);
      const requeueAfterMs = result?.requeueAfterMs;
      if (requeueAfterMs !== undefined && !this.stopped) {
        const timer = setTimeout(() => {
          this.requeues.delete(key);
          this.queue.enqueue(key);
        }, requeueAfterMs);
        timer.unref();
        this.requeues.set(key, timer);
      }
      metrics.reconciles.inc({ controller: name, result: requeueAfterMs !== undefined ? 'requeue' : 'success' });
    } catch (error) {
      metrics.reconciles.inc({ controller: name, result: 'error' });
      metrics.errors.inc({ controller: name });
      throw error;
    } finally {
      end();
    }
  }

  private async resyncAll(): Promise<void> {
    try {
      for (const object of await this.options.store.list(this.options.kind, this.options.namespace)) {
        this.queue.enqueue(keyOf(object.metadata));
      }
    } catch (error) {
      this.failed('resync', error);
    }
  }

  private failed(key: string, error: unknown): void {
    this.options.metrics.errors.inc({ controller: this.options.name });
    this.options.logger.warn('controller error', {
      controller: this.options.name,
      key,
      error: error instanceof Error ? error.message : String(error),
    });
  }

  private clearRequeue(key: string): void {
    clearTimeout(this.requeues.get(key));
    this.requeues.delete(key);
  }
}

function keyOf(meta: ObjectKey): string {
  return `${meta.namespace}/${meta.name}`;
}

function parseKey(key: string): ObjectKey {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
