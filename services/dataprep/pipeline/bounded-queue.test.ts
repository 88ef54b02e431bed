import { describe, expect, it } from '@jest/globals';
import { BoundedQueue } from './bounded-queue.js';
import { Semaphore } from './semaphore.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('BoundedQueue', () => {
  it('makes a producer wait while the queue is full, then drains in order and ends after close', async () => {
    const queue = new BoundedQueue<number>(2);
    let pushed = 0;
    const producer = (async () => {
      for (let i = 0; i < 5; i++) {
        await queue.push(i);
        pushed++;
      }
      queue.close();
    })();
    await tick();
    expect(pushed).toBe(2);
    const taken: number[] = [];
    for (let item = await queue.take(); item !== undefined; item = await queue.take()) taken.push(item);
    await producer;
    expect(taken).toEqual([0, 1, 2, 3, 4]);
    expect(queue.peak).toBe(2);
  });

  it('wakes a blocked producer and consumer with the failure', async () => {
    const full = new BoundedQueue<number>(1);
    await full.push(1);
    const blockedPush = full.push(2);
    const empty = new BoundedQueue<number>(1);
    const blockedTake = empty.take();
    const boom = new Error('stage failed');
    full.fail(boom);
    empty.fail(boom);
    await expect(blockedPush).rejects.toBe(boom);
    await expect(blockedTake).rejects.toBe(boom);
    await expect(full.take()).rejects.toBe(boom);
  });
});

describe('Semaphore', () => {
  it('runs at most `permits` tasks at once, in arrival order', async () => {
    const semaphore = new Semaphore(1);
    const log: string[] = [];
    let release!: () => void;
    const first = semaphore.run(async () => {
      log.push('a start');
      await new Promise<void>((resolve) => (release = resolve));
      log.push('a end');
    });
    const second = semaphore.run(async () => {
      log.push('b');
    });
    await tick();
    expect(log).toEqual(['a start']);
    release();
    await Promise.all([first, second]);
    expect(log).toEqual(['a start', 'a end', 'b']);
  });
});
