import { describe, expect, it } from '@jest/globals';
import { CoalescingCache } from './coalescing-cache.js';

/** A production the test finishes by hand, recording the signal it was given. */
function heldProduction() {
  let finish!: (value: { n: number }) => void;
  let given: AbortSignal | undefined;
  let calls = 0;
  const produce = (signal: AbortSignal) => {
    calls += 1;
    given = signal;
    return new Promise<{ n: number }>((resolve, reject) => {
      finish = resolve;
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  };
  return { produce, finish: (n: number) => finish({ n }), signal: () => given!, calls: () => calls };
}

describe('CoalescingCache', () => {
  it('shares one production among concurrent requests, then answers from the cache', async () => {
    const cache = new CoalescingCache<{ n: number }>({ maxEntries: 10 });
    const held = heldProduction();
    const a = cache.get('k', held.produce, new AbortController().signal);
    const b = cache.get('k', held.produce, new AbortController().signal);
    held.finish(1);
    expect(await a).toEqual({ value: { n: 1 }, outcome: 'miss' });
    expect(await b).toEqual({ value: { n: 1 }, outcome: 'joined' });
    expect(await cache.get('k', held.produce, new AbortController().signal)).toEqual({
      value: { n: 1 },
      outcome: 'hit',
    });
    expect(held.calls()).toBe(1);
  });

  it('one request leaving does not cancel the production another still waits for; the last one leaving does', async () => {
    const cache = new CoalescingCache<{ n: number }>({ maxEntries: 10 });
    const held = heldProduction();
    const first = new AbortController();
    const second = new AbortController();
    const a = cache.get('k', held.produce, first.signal);
    const b = cache.get('k', held.produce, second.signal);
    first.abort(new Error('first left'));
    await expect(a).rejects.toThrow('first left');
    expect(held.signal().aborted).toBe(false);
    second.abort(new Error('second left'));
    await expect(b).rejects.toThrow('second left');
    expect(held.signal().aborted).toBe(true);
    // Nothing was cached: the next request produces again.
    const again = heldProduction();
    const c = cache.get('k', again.produce, new AbortController().signal);
    again.finish(2);
    expect((await c).value).toEqual({ n: 2 });
  });

  it('keeps its byte bound: the least recently used go first, a value larger than the bound is not kept', async () => {
    const cache = new CoalescingCache<{ n: number }>({ maxEntries: 10, maxBytes: 100, sizeOf: (v) => v.n });
    const live = new AbortController().signal;
    for (const [key, n] of [
      ['a', 40],
      ['b', 40],
      ['c', 40],
    ] as const) {
      await cache.get(key, async () => ({ n }), live);
    }
    expect(cache.stats).toEqual({ entries: 2, bytes: 80, running: 0 });
    expect((await cache.get('a', async () => ({ n: 40 }), live)).outcome).toBe('miss');
    await cache.get('huge', async () => ({ n: 500 }), live);
    expect((await cache.get('huge', async () => ({ n: 500 }), live)).outcome).toBe('miss');
  });

  it('does not cache failures', async () => {
    const cache = new CoalescingCache<{ n: number }>({ maxEntries: 10 });
    const live = new AbortController().signal;
    await expect(
      cache.get(
        'k',
        async () => {
          throw new Error('broken');
        },
        live,
      ),
    ).rejects.toThrow('broken');
    expect((await cache.get('k', async () => ({ n: 3 }), live)).outcome).toBe('miss');
  });
});
