import { describe, expect, it } from '@jest/globals';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { EagerBody } from './eager-body.js';

/** A body stream the test writes into, one event-loop turn per step like a socket. */
function body() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return { stream, controller };
}

describe('EagerBody', () => {
  it('hands out every chunk that arrived before the body broke, then the error', async () => {
    const { stream, controller } = body();
    const eager = new EagerBody(stream.getReader());
    for (const text of ['a', 'b', 'c']) {
      controller.enqueue(Buffer.from(text));
      await nextTurn();
    }
    controller.error(new Error('socket closed'));
    await nextTurn();
    // A consumer that only now comes back still gets a, b and c: the web stream alone would have dropped them.
    const got: string[] = [];
    await expect(
      (async () => {
        for (;;) got.push(Buffer.from((await eager.read())!).toString());
      })(),
    ).rejects.toThrow('socket closed');
    expect(got).toEqual(['a', 'b', 'c']);
  });

  it('ends with undefined after the last chunk', async () => {
    const { stream, controller } = body();
    const eager = new EagerBody(stream.getReader());
    const first = eager.read();
    controller.enqueue(Buffer.from('x'));
    controller.close();
    expect(Buffer.from((await first)!).toString()).toBe('x');
    await expect(eager.read()).resolves.toBeUndefined();
  });

  it('reads no further ahead than its bound while nobody consumes', async () => {
    let pulls = 0;
    const stream = new ReadableStream<Uint8Array>(
      { pull: (c) => void (pulls++, c.enqueue(new Uint8Array(10))) },
      { highWaterMark: 0 },
    );
    const eager = new EagerBody(stream.getReader(), 25);
    for (let i = 0; i < 20; i++) await nextTurn();
    expect(pulls).toBe(3); // 30 bytes read ahead: at the bound it waits
    await eager.read();
    for (let i = 0; i < 20; i++) await nextTurn();
    expect(pulls).toBe(4); // 20 ahead after one read: below the bound again, one more pull, then at the bound
  });
});
