/** Bytes read ahead of a slow consumer at most; beyond them the body is read only as fast as it is consumed. */
const MAX_AHEAD_BYTES = 1 << 20;

/**
 * Reads a response body as fast as it arrives, up to a bound, and hands the chunks out in order. A web stream that
 * errors drops the chunks it had queued; reading eagerly keeps what arrived before a broken connection, so the
 * consumer gets every byte the server sent and only then the error.
 */
export class EagerBody {
  private readonly chunks: Uint8Array[] = [];
  private ahead = 0;
  private ended: { error?: unknown } | undefined;
  private wake: (() => void) | undefined;
  private resume: (() => void) | undefined;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly maxAheadBytes = MAX_AHEAD_BYTES,
  ) {
    void this.pump();
  }

  /** The next chunk, or undefined at the end of the body; throws the body's error once every earlier chunk is out. */
  async read(): Promise<Uint8Array | undefined> {
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk) {
        this.ahead -= chunk.byteLength;
        this.take(this.resume);
        return chunk;
      }
      if (this.ended) {
        if (this.ended.error !== undefined) throw this.ended.error;
        return undefined;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        while (this.ahead >= this.maxAheadBytes) await new Promise<void>((resolve) => (this.resume = resolve));
        const { done, value } = await this.reader.read();
        if (done) break;
        this.chunks.push(value);
        this.ahead += value.byteLength;
        this.take(this.wake);
      }
      this.ended = {};
    } catch (error) {
      this.ended = { error: error ?? new Error('body failed') };
    }
    this.take(this.wake);
  }

  /** Calls a parked waker once. */
  private take(waker: (() => void) | undefined): void {
    if (waker === this.wake) this.wake = undefined;
    if (waker === this.resume) this.resume = undefined;
    waker?.();
  }
}
