/** How `enqueue`d keys are retried after their handler fails. */
export interface BackOff {
  /** Delay before the first retry. */
  baseMs: number;
  /** Ceiling of the doubling delay. */
  maxMs: number;
}

/** Options of a KeyedQueue. */
export interface KeyedQueueOptions<K> {
  /** Reconciles one key; what `enqueue` runs. A rejection schedules a retry with back-off. */
  handler?: (key: K, signal: AbortSignal) => Promise<void>;
  backOff?: BackOff;
  /** Called with a handler's failure before its retry is scheduled (the queue never throws it anywhere). */
  onError?: (key: K, error: unknown, retryInMs: number) => void;
}

/** Raised by `run` and `enqueue` once the queue is closed. */
export class QueueClosedError extends Error {
  constructor() {
    super('the queue is closed');
    this.name = 'QueueClosedError';
  }
}

const DEFAULT_BACK_OFF: BackOff = { baseMs: 100, maxMs: 30_000 };

interface KeyState {
  /** The tail of this key's chain: settles when its last task has. */
  tail: Promise<void>;
  /** Tasks chained on this key and not yet settled. */
  pending: number;
  /** An `enqueue` is waiting in the chain and has not started: further enqueues coalesce into it. */
  queued: boolean;
  failures: number;
  retryTimer?: NodeJS.Timeout;
}

/**
 * One task per key at a time; keys run independently of each other.
 *
 * - `run(key, task)` chains a task behind every earlier task of the key and returns its result (serialised reloads,
 *   writers).
 * - `enqueue(key)` asks for the handler to run for the key (a controller's reconcile). Requests coalesce: while one is
 *   waiting, more requests for the key add nothing; a request made while the handler runs makes it run once more
 *   afterwards. A failure retries with exponential back-off up to a ceiling; a success resets it.
 * - `close()` refuses new work, cancels retries, aborts the signal of every task and waits for them to settle.
 */
export class KeyedQueue<K = string> {
  private readonly keys = new Map<K, KeyState>();
  private readonly abort = new AbortController();
  private readonly backOff: BackOff;

  constructor(private readonly options: KeyedQueueOptions<K> = {}) {
    this.backOff = options.backOff ?? DEFAULT_BACK_OFF;
  }

  /** Fires when the queue closes; tasks receive it. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Keys with a task waiting or running, or a retry scheduled. */
  get depth(): number {
    return this.keys.size;
  }

  /** Keys whose handler is waiting for a retry after failing. */
  get retrying(): number {
    let n = 0;
    for (const state of this.keys.values()) if (state.retryTimer) n++;
    return n;
  }

  /** Runs `task` once every earlier task of `key` has settled; resolves or rejects as the task does. */
  run<T>(key: K, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.abort.signal.aborted) return Promise.reject(new QueueClosedError());
    const state = this.stateOf(key);
    state.pending++;
    const result = state.tail.then(() => task(this.abort.signal));
    state.tail = result.then(
      () => this.settled(key, state),
      () => this.settled(key, state),
    );
    return result;
  }

  /** Asks for the handler to run for `key` (coalesced with a request that has not started yet). */
  enqueue(key: K): void {
    const handler = this.options.handler;
    if (!handler) throw new Error('enqueue needs a handler');
    if (this.abort.signal.aborted) return;
    const state = this.stateOf(key);
    if (state.queued) return;
    if (state.retryTimer) {
      // A fresh event is worth trying at once: the retry it replaces would do the same work later.
      clearTimeout(state.retryTimer);
      state.retryTimer = undefined;
    }
    state.queued = true;
    this.run(key, async (signal) => {
      state.queued = false;
      if (signal.aborted) return;
      try {
        await handler(key, signal);
        state.failures = 0;
      } catch (error) {
        if (signal.aborted) return;
        this.scheduleRetry(key, state, error);
      }
    }).catch(() => undefined);
  }

  /** Forgets the back-off of `key` and cancels its scheduled retry (the object is gone). */
  forget(key: K): void {
    const state = this.keys.get(key);
    if (!state) return;
    clearTimeout(state.retryTimer);
    state.retryTimer = undefined;
    state.failures = 0;
    if (state.pending === 0) this.keys.delete(key);
  }

  /** Refuses new work, cancels retries, aborts running tasks and waits until every task has settled. */
  async close(): Promise<void> {
    this.abort.abort(new QueueClosedError());
    const tails: Promise<void>[] = [];
    for (const state of this.keys.values()) {
      clearTimeout(state.retryTimer);
      state.retryTimer = undefined;
      tails.push(state.tail);
    }
    await Promise.all(tails);
  }

  private stateOf(key: K): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      state = { tail: Promise.resolve(), pending: 0, queued: false, failures: 0 };
      this.keys.set(key, state);
    }
    return state;
  }

  private settled(key: K, state: KeyState): void {
    state.pending--;
    if (state.pending === 0 && !state.retryTimer && state.failures === 0 && this.keys.get(key) === state) {
      this.keys.delete(key);
    }
  }

  private scheduleRetry(key: K, state: KeyState, error: unknown): void {
    const delay = Math.min(this.backOff.maxMs, this.backOff.baseMs * 2 ** state.failures);
    state.failures++;
    this.options.onError?.(key, error, delay);
    state.retryTimer = setTimeout(() => {
      state.retryTimer = undefined;
      this.enqueue(key);
    }, delay);
    state.retryTimer.unref();
  }
}
