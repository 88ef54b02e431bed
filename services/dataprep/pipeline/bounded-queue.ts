/**
 * A FIFO between two pipeline stages with a fixed capacity: `push` waits while it is full (backpressure), `take`
 * waits while it is empty. `close` lets the consumer drain and then see the end; `fail` wakes everybody with an error.
 */
export class BoundedQueue<T> {
  private readonly items: T[] = [];
  private closed = false;
  private failure: { error: unknown } | undefined;
  private readonly waitingTakers: Array<() => void> = [];
  private readonly waitingPushers: Array<() => void> = [];
  /** Largest number of items held at once (telemetry: shows which stage was the bottleneck). */
  peak = 0;

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
  }

  get size(): number {
    return this.items.length;
  }

  /** Adds an item, waiting for room; throws the failure if the queue failed, and after close. */
  async push(item: T): Promise<void> {
    while (this.items.length >= this.capacity && !this.failure && !this.closed) {
      await new Promise<void>((resolve) => this.waitingPushers.push(resolve));
    }
    if (this.failure) throw this.failure.error;
    if (this.closed) throw new Error('push to a closed queue');
    this.items.push(item);
    this.peak = Math.max(this.peak, this.items.length);
    this.waitingTakers.shift()?.();
  }

  /** Next item, waiting for one; undefined once the queue is closed and drained. Throws the failure if failed. */
  async take(): Promise<T | undefined> {
    while (this.items.length === 0 && !this.closed && !this.failure) {
      await new Promise<void>((resolve) => this.waitingTakers.push(resolve));
    }
    if (this.failure) throw this.failure.error;
    const item = this.items.shift();
    this.waitingPushers.shift()?.();
    return item;
  }

  /** No more pushes: takers drain what is left and then get undefined. */
  close(): void {
    this.closed = true;
    this.wakeAll();
  }

  /** Aborts both sides: pending and later push/take calls throw `error`. Items held are dropped. */
  fail(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    this.items.length = 0;
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const wake of this.waitingTakers.splice(0)) wake();
    for (const wake of this.waitingPushers.splice(0)) wake();
  }
}
