import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { KeyedQueue, QueueClosedError } from './index.js';

/** A promise the test settles by hand. */
function gate<T = void>() {
  let open!: (value: T) => void;
  let fail!: (error: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

/** Lets every queued microtask and promise callback run. */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

afterEach(() => {
  jest.useRealTimers();
});

describe('KeyedQueue.run', () => {
  it('runs the tasks of one key one at a time, in order, and returns their results', async () => {
    const q = new KeyedQueue<string>();
    const first = gate();
    const log: string[] = [];
    const a = q.run('k', async () => {
      log.push('a start');
      await first.promise;
      log.push('a end');
      return 1;
    });
    const b = q.run('k', async () => {
      log.push('b');
      return 2;
    });
    await drain();
    expect(log).toEqual(['a start']);
    first.open();
    await expect(a).resolves.toBe(1);
    await expect(b).resolves.toBe(2);
    expect(log).toEqual(['a start', 'a end', 'b']);
    expect(q.depth).toBe(0);
  });

  it('runs different keys independently and passes a failure to its caller only', async () => {
    const q = new KeyedQueue<string>();
    const held = gate();
    const slow = q.run('a', () => held.promise);
    await expect(q.run('b', async () => 'b done')).resolves.toBe('b done');
    await expect(q.run('a2', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    held.open();
    await slow;
    await expect(q.run('a2', async () => 'after a failure')).resolves.toBe('after a failure');
  });

  it('close() aborts running tasks, waits for them and refuses new ones', async () => {
    const q = new KeyedQueue<string>();
    let sawAbort = false;
    const running = q.run(
      'k',
      (signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            sawAbort = true;
            resolve();
          });
        }),
    );
    await drain();
    await q.close();
    await running;
    expect(sawAbort).toBe(true);
    await expect(q.run('k', async () => 1)).rejects.toBeInstanceOf(QueueClosedError);
  });
});

describe('KeyedQueue.enqueue', () => {
  it('coalesces requests that arrive before the handler starts, and re-runs once for requests made while it runs', async () => {
    const calls: string[] = [];
    let release = gate();
    const q = new KeyedQueue<string>({
      handler: async (key) => {
        calls.push(key);
        await release.promise;
      },
    });
    q.enqueue('x');
    q.enqueue('x');
    q.enqueue('x');
    await drain();
    expect(calls).toEqual(['x']);
    // Three requests while it runs: one more run afterwards.
    q.enqueue('x');
    q.enqueue('x');
    q.enqueue('x');
    const first = release;
    release = gate();
    first.open();
    await drain();
    expect(calls).toEqual(['x', 'x']);
    release.open();
    await drain();
    expect(calls).toEqual(['x', 'x']);
    expect(q.depth).toBe(0);
  });

  it('retries a failing key with doubling back-off up to the ceiling, and resets after a success', async () => {
    jest.useFakeTimers();
    let failuresLeft = 5;
    const attempts: number[] = [];
    const delays: number[] = [];
    const q = new KeyedQueue<string>({
      backOff: { baseMs: 100, maxMs: 400 },
      onError: (_key, _error, retryInMs) => delays.push(retryInMs),
      handler: async () => {
        attempts.push(Date.now());
        if (failuresLeft-- > 0) throw new Error('not yet');
      },
    });
    q.enqueue('k');
    await jest.advanceTimersByTimeAsync(0);
    expect(attempts).toHaveLength(1);
    expect(q.retrying).toBe(1);
    await jest.advanceTimersByTimeAsync(100 + 200 + 400 + 400 + 400);
    expect(delays).toEqual([100, 200, 400, 400, 400]);
    expect(attempts).toHaveLength(6);
    expect(q.depth).toBe(0);
    // A later failure starts from the base delay again.
    failuresLeft = 1;
    q.enqueue('k');
    await jest.advanceTimersByTimeAsync(0);
    expect(delays.at(-1)).toBe(100);
    await q.close();
  });

  it('a fresh request replaces a scheduled retry; forget() drops the retry; close() cancels retries', async () => {
    jest.useFakeTimers();
    let calls = 0;
    const q = new KeyedQueue<string>({
      backOff: { baseMs: 10_000, maxMs: 10_000 },
      handler: async () => {
        calls++;
        throw new Error('always');
      },
    });
    q.enqueue('k');
    await jest.advanceTimersByTimeAsync(0);
    expect(calls).toBe(1);
    q.enqueue('k');
    await jest.advanceTimersByTimeAsync(0);
    expect(calls).toBe(2);
    q.forget('k');
    expect(q.retrying).toBe(0);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(calls).toBe(2);
    q.enqueue('k');
    await jest.advanceTimersByTimeAsync(0);
    await q.close();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(calls).toBe(3);
    q.enqueue('k');
    await jest.advanceTimersByTimeAsync(0);
    expect(calls).toBe(3);
  });

  it('stops a handler through its signal when the queue closes, without scheduling a retry', async () => {
    let aborted = false;
    const q = new KeyedQueue<string>({
      handler: (_key, signal) =>
        new Promise<void>((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(signal.reason);
          });
        }),
    });
    q.enqueue('k');
    await drain();
    await q.close();
    expect(aborted).toBe(true);
    expect(q.retrying).toBe(0);
  });
});
