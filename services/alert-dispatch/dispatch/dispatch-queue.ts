import client from 'prom-client';
import type { Logger } from '../../lib/log/index.js';
import type { ActionRequest } from './types.js';

/** What the queue runs: the dispatcher's pipeline and the shutdown signal that ends the wait of queued alerts. */
export interface QueuedDispatcher {
  dispatch(request: ActionRequest): Promise<unknown>;
  readonly signal: AbortSignal;
}

/** Limits of the intake queue (ALERT_QUEUE_CONCURRENCY, ALERT_QUEUE_LENGTH). */
export interface DispatchQueueOptions {
  /** Dispatches of accepted alerts running at once. */
  concurrency: number;
  /** Accepted alerts waiting for a free slot; one more is refused. */
  maxLength: number;
  logger: Logger;
}

/**
 * The bounded intake of fire-and-forget alerts (POST /alerts): up to `concurrency` dispatches run, up to `maxLength`
 * accepted alerts wait in arrival order, and `offer` refuses the next one, so the service never accepts (and holds
 * the body of) more than it can dispatch. When the dispatcher's shutdown signal fires, alerts still waiting are
 * dropped and logged, one line each.
 */
export class DispatchQueue {
  private readonly waiting: ActionRequest[] = [];
  private running = 0;
  private rejectedCount = 0;
  private droppedCount = 0;

  constructor(
    private readonly dispatcher: QueuedDispatcher,
    private readonly options: DispatchQueueOptions,
  ) {
    dispatcher.signal.addEventListener('abort', () => this.dropWaiting(), { once: true });
  }

  /** Starts or queues the dispatch of `request`; false (nothing kept) when the queue is full or shutting down. */
  offer(request: ActionRequest): boolean {
    if (this.dispatcher.signal.aborted) return false;
    if (this.running < this.options.concurrency) {
      this.start(request);
      return true;
    }
    if (this.waiting.length >= this.options.maxLength) {
      this.rejectedCount++;
      return false;
    }
    this.waiting.push(request);
    return true;
  }

  /** Accepted alerts waiting for a slot. */
  get depth(): number {
    return this.waiting.length;
  }

  /** Dispatches running now. */
  get active(): number {
    return this.running;
  }

  /** Alerts refused because the queue was full, since start. */
  get rejected(): number {
    return this.rejectedCount;
  }

  /** Queued alerts dropped at shutdown, since start. */
  get dropped(): number {
    return this.droppedCount;
  }

  private start(request: ActionRequest): void {
    this.running++;
    this.dispatcher.dispatch(request).then(
      () => this.next(),
      (err) => {
        this.options.logger.error('background dispatch failed', { event_id: request.event_id, error: String(err) });
        this.next();
      },
    );
  }

  /** A slot is free: the oldest waiting alert takes it. Synchronous, so a drain waiting on dispatches sees it. */
  private next(): void {
    this.running--;
    const request = this.waiting.shift();
    if (request) this.start(request);
  }

  private dropWaiting(): void {
    for (const request of this.waiting.splice(0)) {
      this.droppedCount++;
      this.options.logger.warn('queued alert dropped at shutdown', {
        event_id: request.event_id,
        alert_name: request.alert_name,
      });
    }
  }
}

/** Exposes the queue on a Prometheus registry: depth and running as gauges, refusals and drops as counters. */
export function registerQueueMetrics(registry: client.Registry, queue: DispatchQueue): void {
  new client.Gauge({
    name: 'alert_dispatch_queue_depth',
    help: 'Accepted alerts waiting for a dispatch slot',
    registers: [registry],
    collect() {
      this.set(queue.depth);
    },
  });
  new client.Gauge({
    name: 'alert_dispatch_queue_running',
    help: 'Dispatches of accepted alerts running now',
    registers: [registry],
    collect() {
      this.set(queue.active);
    },
  });
  new client.Counter({
    name: 'alert_dispatch_queue_rejected_total',
    help: 'Alerts answered 429 because the dispatch queue was full',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(queue.rejected);
    },
  });
  new client.Counter({
    name: 'alert_dispatch_queue_dropped_total',
    help: 'Queued alerts dropped when shutdown aborted the dispatches',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(queue.dropped);
    },
  });
}
