import { Readable } from 'node:stream';

/** The first bytes of a stream, and a stream that replays them followed by the rest. */
export interface PeekedStream {
  head: Buffer;
  stream: Readable;
}

/**
 * Reads at least `size` bytes (fewer when the stream ends first) so the content type can be checked before the
 * stream is stored. Destroying the returned stream destroys `source`; errors of `source` surface on it.
 */
export async function peekHead(source: Readable, size: number): Promise<PeekedStream> {
  const iterator: AsyncIterator<Buffer> = source[Symbol.asyncIterator]();
  const buffered: Buffer[] = [];
  let length = 0;
  let ended = false;
  while (length < size) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    buffered.push(next.value);
    length += next.value.length;
  }
  async function* replay(): AsyncGenerator<Buffer> {
    try {
      yield* buffered;
      if (ended) return;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      if (!ended) await iterator.return?.();
    }
  }
  return { head: Buffer.concat(buffered).subarray(0, size), stream: Readable.from(replay(), { objectMode: false }) };
}
