/**
 * State that every replica of a service must see alike: claims, values and counters that expire, and bounded lists of
 * recent items. Keys are strings in the adapter's namespace; values are strings (callers serialise).
 *
 * Every operation is atomic on its key, so replicas racing on one key agree on the outcome (one claim wins, a counter
 * counts every increment). An adapter that cannot reach its backend rejects with SharedStateUnavailableError and keeps
 * trying to reconnect; what a feature does then (fail open or closed) is the caller's documented choice.
 */
export interface SharedState {
  /** Which backend holds the state: `memory` (this process only) or `redis` (every replica). */
  readonly backend: 'memory' | 'redis';
  /** Claims `key` for `owner` for `ttlMs` when no live claim holds it; true when this call claimed it. */
  claim(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Releases the claim on `key` when `owner` holds it; true when it did. */
  release(key: string, owner: string): Promise<boolean>;
  /** The value of `key`, or undefined when it is absent or expired. */
  get(key: string): Promise<string | undefined>;
  /** Sets `key` to `value` for `ttlMs`. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /**
   * Sets `key` to `next` for `ttlMs` when its value is `expected` (undefined: when it is absent or expired); true when
   * it did, false when another value stood there.
   */
  compareAndSet(key: string, expected: string | undefined, next: string, ttlMs: number): Promise<boolean>;
  /**
   * Adds `by` to the counter `key` and answers its new value. A counter lives `ttlMs` from its first increment (a
   * fixed window: later increments do not extend it); an expired counter starts again from 0.
   */
  increment(key: string, ttlMs: number, by?: number): Promise<number>;
  /** Removes `key` (a value, claim, counter or list). */
  delete(key: string): Promise<void>;
  /** Puts `item` first in the list `key`, keeping its `max` newest items. */
  pushRecent(key: string, item: string, max: number): Promise<void>;
  /** The newest `count` items of the list `key`, newest first. */
  recent(key: string, count: number): Promise<string[]>;
  /** Closes connections; later calls reject. */
  close(): Promise<void>;
}

/** The backend of a SharedState cannot be reached (or answered with an error): the operation did not happen. */
export class SharedStateUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SharedStateUnavailableError';
  }
}
