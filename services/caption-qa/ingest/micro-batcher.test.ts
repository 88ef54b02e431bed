import { describe, expect, it } from '@jest/globals';
import { MicroBatcher } from './micro-batcher.js';

describe('MicroBatcher', () => {
  it('runs a lone item at once and groups the items that arrive while a batch runs', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new MicroBatcher<number, number>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await gate;
      return items.map((n) => n * 10);
    }, 3);
    const first = batcher.submit(1);
    const rest = [2, 3, 4, 5].map((n) => batcher.submit(n));
    release();
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40, 50]);
    expect(batches).toEqual([[1], [2, 3, 4], [5]]);
  });

  it('rejects every item of a failed batch and keeps serving later ones', async () => {
    let fail = true;
    const batcher = new MicroBatcher<string, string>(async (items) => {
      if (fail) throw new Error('store down');
      return items;
    }, 8);
    await expect(batcher.submit('a')).rejects.toThrow('store down');
    fail = false;
    await expect(batcher.submit('b')).resolves.toBe('b');
  });
});
