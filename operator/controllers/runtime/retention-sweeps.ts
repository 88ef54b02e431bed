import { KeyedQueue } from '../../../services/lib/keyed-queue/index.js';

/** Longest wait between retention sweeps (clock changes, finished objects whose expiry was not foreseen). */
const MAX_SWEEP_INTERVAL_MS = 3600_000;

/**
 * When a controller sweeps its finished objects past their retention: on request (at start, when one finishes),
 * one sweep at a time, a failed one retried with the queue's back-off, and the next one planned for when the
 * earliest kept object expires (between a second and an hour away). `sweep` deletes what expired and answers in how
 * many milliseconds the next object expires (undefined: none kept).
 */
export class RetentionSweeps {
  private readonly queue: KeyedQueue<'sweep'>;
  private timer?: NodeJS.Timeout;

  constructor(sweep: () => Promise<number | undefined>, onError: (error: unknown, retryInMs: number) => void) {
    this.queue = new KeyedQueue<'sweep'>({
      handler: async () => this.plan(await sweep()),
      onError: (_key, error, retryInMs) => onError(error, retryInMs),
    });
  }

  /** Asks for a sweep now (coalesced with one that has not started). */
  request(): void {
    this.queue.enqueue('sweep');
  }

  /** Stops planning sweeps and waits for a running one. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    await this.queue.close();
  }

  private plan(nextExpiryMs: number | undefined): void {
    clearTimeout(this.timer);
    const delay = Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(1000, nextExpiryMs ?? MAX_SWEEP_INTERVAL_MS));
    this.timer = setTimeout(() => this.request(), delay);
    this.timer.unref();
  }
}
