import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { SharedState } from './shared-state.js';

/** A fresh, empty SharedState, and a way to move its clock forward by `ms` (expiring what is due). */
export interface SharedStateFixture {
  state: SharedState;
  elapse(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** The behaviour every SharedState adapter must have; `open` makes a fresh, empty one for each test. */
export function describeSharedStateContract(name: string, open: () => Promise<SharedStateFixture>): void {
  describe(`SharedState contract: ${name}`, () => {
    let f: SharedStateFixture;
    beforeEach(async () => {
      f = await open();
    });
    afterEach(async () => {
      await f.close();
    });

    it('claims a key once until it expires or its owner releases it', async () => {
      expect(await f.state.claim('k', 'a', 1000)).toBe(true);
      expect(await f.state.claim('k', 'b', 1000)).toBe(false);
      expect(await f.state.release('k', 'b')).toBe(false);
      expect(await f.state.get('k')).toBe('a');
      expect(await f.state.release('k', 'a')).toBe(true);
      expect(await f.state.claim('k', 'b', 1000)).toBe(true);
      await f.elapse(1001);
      expect(await f.state.get('k')).toBeUndefined();
      expect(await f.state.claim('k', 'c', 1000)).toBe(true);
    });

    it('gives one claim to one of many racing claimants', async () => {
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => f.state.claim('race', `o${i}`, 5000)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('sets values that expire, and compares-and-sets atomically', async () => {
      await f.state.set('v', 'one', 500);
      expect(await f.state.get('v')).toBe('one');
      expect(await f.state.compareAndSet('v', 'other', 'two', 500)).toBe(false);
      expect(await f.state.compareAndSet('v', 'one', 'two', 500)).toBe(true);
      expect(await f.state.get('v')).toBe('two');
      expect(await f.state.compareAndSet('absent', undefined, 'x', 500)).toBe(true);
      expect(await f.state.compareAndSet('absent', undefined, 'y', 500)).toBe(false);
      await f.elapse(501);
      expect(await f.state.get('v')).toBeUndefined();
      expect(await f.state.compareAndSet('v', undefined, 'three', 500)).toBe(true);
      await f.state.delete('v');
      expect(await f.state.get('v')).toBeUndefined();
    });

    it('counts every increment of racing callers within a fixed window', async () => {
      const values = await Promise.all(Array.from({ length: 40 }, () => f.state.increment('c', 1000)));
      expect(values.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      await f.elapse(600);
      // A later increment does not extend the window opened by the first.
      expect(await f.state.increment('c', 1000, 2)).toBe(42);
      await f.elapse(401);
      expect(await f.state.increment('c', 1000)).toBe(1);
    });

    it('keeps the newest items of a list, newest first', async () => {
      for (let i = 1; i <= 7; i++) await f.state.pushRecent('list', `item-${i}`, 5);
      expect(await f.state.recent('list', 10)).toEqual(['item-7', 'item-6', 'item-5', 'item-4', 'item-3']);
      expect(await f.state.recent('list', 2)).toEqual(['item-7', 'item-6']);
      expect(await f.state.recent('missing', 3)).toEqual([]);
      await f.state.delete('list');
      expect(await f.state.recent('list', 3)).toEqual([]);
    });
  });
}
