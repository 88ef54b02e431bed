import { describe, expect, it } from '@jest/globals';
import { sharedRead } from './shared-read.js';

describe('sharedRead', () => {
  it('serves callers within the time-to-live from one read, reads again after it, and retries a failed read', async () => {
    let now = 0;
    let reads = 0;
    let fail = false;
    const read = sharedRead(
      async () => {
        reads++;
        if (fail) throw new Error('store down');
        return reads;
      },
      250,
      () => now,
    );
    expect(await Promise.all([read(), read(), read()])).toEqual([1, 1, 1]);
    now = 249;
    expect(await read()).toBe(1);
    now = 250;
    expect(await read()).toBe(2);
    fail = true;
    now = 600;
    await expect(read()).rejects.toThrow('store down');
    fail = false;
    expect(await read()).toBe(4);
    expect(reads).toBe(4);
  });
});
