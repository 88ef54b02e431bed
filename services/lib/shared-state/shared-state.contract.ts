import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { compareBroadcastIds, type BroadcastEntry, type SharedState } from './shared-state.js';

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

    it('numbers broadcasts in order, delivers each once to every subscriber and keeps the newest as a backlog', async () => {
      const first: BroadcastEntry[] = [];
      const second: BroadcastEntry[] = [];
      const stopFirst = await f.state.subscribe('events', (entry) => first.push(entry));
      const stopSecond = await f.state.subscribe('events', (entry) => second.push(entry));
      const sent: BroadcastEntry[] = [];
      for (let i = 1; i <= 6; i++) sent.push(await f.state.broadcast('events', `item-${i}`, 4));
      expect(sent.map((e) => e.item)).toEqual(['item-1', 'item-2', 'item-3', 'item-4', 'item-5', 'item-6']);
      for (let i = 1; i < sent.length; i++) expect(compareBroadcastIds(sent[i - 1].id, sent[i].id)).toBeLessThan(0);
      // Delivery may lag the reply (a second connection): wait for it, bounded.
      for (let turn = 0; turn < 1000 && (first.length < 6 || second.length < 6); turn++) {
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      expect(first).toEqual(sent);
      expect(second).toEqual(sent);
      expect(await f.state.backlog('events')).toEqual(sent.slice(2));
      expect(await f.state.backlog('events', sent[3].id)).toEqual(sent.slice(4));
      expect(await f.state.backlog('events', sent[5].id)).toEqual([]);
      expect(await f.state.backlog('other')).toEqual([]);
      await stopFirst();
      const seventh = await f.state.broadcast('events', 'item-7', 4);
      for (let turn = 0; turn < 1000 && second.length < 7; turn++) await new Promise((r) => setTimeout(r, 2));
      expect(second.at(-1)).toEqual(seventh);
      expect(first).toHaveLength(6);
      await stopSecond();
    });

    it('numbers concurrent broadcasts in call order and carries any text (spaces, line breaks, non-ASCII) intact', async () => {
      const received: BroadcastEntry[] = [];
      const stop = await f.state.subscribe('batch', (entry) => received.push(entry));
      const items = Array.from({ length: 25 }, (_, i) => `#${i} café 🚨 a b\nline ${'x'.repeat(i * 7)}`);
      const sent = await Promise.all(items.map((item) => f.state.broadcast('batch', item, 100)));
      expect(sent.map((e) => e.item)).toEqual(items);
      for (let i = 1; i < sent.length; i++) expect(compareBroadcastIds(sent[i - 1].id, sent[i].id)).toBeLessThan(0);
      for (let turn = 0; turn < 1000 && received.length < items.length; turn++) {
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      expect(received).toEqual(sent);
      expect(await f.state.backlog('batch')).toEqual(sent);
      await stop();
    });

    it('orders ids by epoch first, so a count that began again still comes after the earlier one', () => {
      expect(compareBroadcastIds('1000-9', '1000-10')).toBeLessThan(0);
      expect(compareBroadcastIds('2000-1', '1000-500')).toBeGreaterThan(0);
      expect(compareBroadcastIds('1000-3', '1000-3')).toBe(0);
      expect(compareBroadcastIds('garbage', '1000-1')).toBeLessThan(0);
    });
  });
}
