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
  /**
   * Numbers `item` with the channel's next id, keeps it among the newest `keep` entries of the channel's backlog and
   * delivers it to every subscriber of the channel (every replica), as one atomic step: ids, backlog order and
   * delivery order agree, whichever replica broadcast.
   */
  broadcast(channel: string, item: string, keep: number): Promise<BroadcastEntry>;
  /**
   * Calls `listener` with every entry broadcast on `channel` from now on, in id order; resolves once listening, with
   * the function that stops it. After a lost connection the adapter listens again by itself and then calls `onGap`:
   * entries broadcast meanwhile were missed, read them from the backlog.
   */
  subscribe(channel: string, listener: BroadcastListener, onGap?: () => void): Promise<() => Promise<void>>;
  /** The kept entries of `channel` with an id after `afterId` (every kept one without it), oldest first. */
  backlog(channel: string, afterId?: string): Promise<BroadcastEntry[]>;
  /** Closes connections; later calls reject. */
  close(): Promise<void>;
}

/**
 * One broadcast item. `id` is `<epoch>-<seq>`: `seq` counts the channel's items, `epoch` (milliseconds) is when its
 * count began, so a count that starts again (a Redis restarted empty) still orders after the ids before it.
 */
export interface BroadcastEntry {
  id: string;
  item: string;
}

/** Receives the entries of a subscribed channel. */
export type BroadcastListener = (entry: BroadcastEntry) => void;

/** Negative, zero or positive as broadcast id `a` comes before, is, or comes after `b` (malformed ids come first). */
export function compareBroadcastIds(a: string, b: string): number {
  const [epochA, seqA] = splitBroadcastId(a);
  const [epochB, seqB] = splitBroadcastId(b);
  return epochA - epochB || seqA - seqB;
}

function splitBroadcastId(id: string): [number, number] {
  const dash = id.indexOf('-');
  const epoch = Number(id.slice(0, dash));
  const seq = Number(id.slice(dash + 1));
  return dash > 0 && Number.isFinite(epoch) && Number.isFinite(seq) ? [epoch, seq] : [-1, -1];
}

/** The backend of a SharedState cannot be reached (or answered with an error): the operation did not happen. */
export class SharedStateUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SharedStateUnavailableError';
  }
}
