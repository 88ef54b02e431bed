import { LRUCache } from 'lru-cache';

/** How a value was obtained: from the cache, by producing it, or by joining a production already under way. */
export type CacheOutcome = 'hit' | 'miss' | 'joined';

/** Bounds of a CoalescingCache: entries always, bytes when `sizeOf` says what an entry weighs. */
export interface CoalescingCacheOptions<V> {
  maxEntries: number;
  maxBytes?: number;
  sizeOf?: (value: V) => number;
}

interface Flight<V> {
  promise: Promise<V>;
  controller: AbortController;
  waiters: number;
}

/** Settles with `promise`, or rejects with the signal's reason as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A bounded LRU of produced values where concurrent requests for one key share one production. Each production
 * gets a signal that aborts only when every request waiting for it has gone (one client leaving never cancels the
 * work another still waits for). Failures are not cached: the next request produces again.
 */
export class CoalescingCache<V extends object> {
  private readonly done: LRUCache<string, V>;
  private readonly running = new Map<string, Flight<V>>();

  constructor(options: CoalescingCacheOptions<V>) {
    this.done =
      options.maxBytes !== undefined && options.sizeOf
        ? new LRUCache<string, V>({
            max: options.maxEntries,
            maxSize: options.maxBytes,
            // A value larger than the whole cache is simply not kept.
            sizeCalculation: (value) => Math.max(1, options.sizeOf!(value)),
          })
        : new LRUCache<string, V>({ max: options.maxEntries });
  }

  /** The value of `key`: cached, joined while another request produces it, or produced now by `produce`. */
  async get(
    key: string,
    produce: (signal: AbortSignal) => Promise<V>,
    signal: AbortSignal,
  ): Promise<{ value: V; outcome: CacheOutcome }> {
    signal.throwIfAborted();
    const cached = this.done.get(key);
    if (cached !== undefined) return { value: cached, outcome: 'hit' };
    let flight = this.running.get(key);
    const outcome: CacheOutcome = flight ? 'joined' : 'miss';
    flight ??= this.start(key, produce);
    flight.waiters += 1;
    try {
      return { value: await untilAborted(flight.promise, signal), outcome };
    } finally {
      flight.waiters -= 1;
      if (flight.waiters === 0 && this.running.get(key) === flight) flight.controller.abort(signal.reason);
    }
  }

  /** Values held and their total size (what the bounds apply to). */
  get stats(): { entries: number; bytes: number; running: number } {
    return { entries: this.done.size, bytes: this.done.calculatedSize, running: this.running.size };
  }

  private start(key: string, produce: (signal: AbortSignal) => Promise<V>): Flight<V> {
    const controller = new AbortController();
    const flight: Flight<V> = { controller, waiters: 0, promise: undefined as unknown as Promise<V> };
    // Registered before production starts, so a production failing at once still finds (and removes) its entry.
    this.running.set(key, flight);
    flight.promise = (async () => {
      try {
        const value = await produce(controller.signal);
        this.done.set(key, value);
        return value;
      } finally {
        if (this.running.get(key) === flight) this.running.delete(key);
      }
    })();
    // Every waiter may have left already; the failure then has nobody to reach.
    flight.promise.catch(() => undefined);
    return flight;
  }
}
