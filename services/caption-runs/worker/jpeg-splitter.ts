/** A JPEG image in a byte stream is longer than the caller allows (a broken stream, not a frame). */
export class OversizedFrameError extends Error {
  constructor(limit: number) {
    super(`a frame from the stream is over ${limit} bytes`);
    this.name = 'OversizedFrameError';
  }
}

/**
 * Splits ffmpeg's MJPEG output (`-f image2pipe -c:v mjpeg`) into whole JPEG images: each starts at SOI (FF D8) and
 * ends at EOI (FF D9). A JPEG's entropy-coded data stuffs every FF byte (FF 00), so EOI cannot appear inside one.
 * Bytes before an SOI are dropped; a frame growing past `maxBytes` throws OversizedFrameError.
 */
export class JpegSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private inFrame = false;
  /** The last byte of the previous chunk was FF (a marker may straddle two chunks). */
  private lastWasFf = false;

  constructor(private readonly maxBytes: number) {}

  /** Feeds one chunk; returns the images it completed, in order. */
  push(chunk: Buffer): Buffer[] {
    const frames: Buffer[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const previousFf = i === 0 ? this.lastWasFf : chunk[i - 1] === 0xff;
      if (!previousFf) continue;
      if (!this.inFrame && chunk[i] === 0xd8) {
        this.inFrame = true;
        this.pending = [Buffer.from([0xff])];
        this.pendingBytes = 1;
        start = i;
      } else if (this.inFrame && chunk[i] === 0xd9) {
        this.append(chunk.subarray(start, i + 1));
        frames.push(Buffer.concat(this.pending, this.pendingBytes));
        this.pending = [];
        this.pendingBytes = 0;
        this.inFrame = false;
        start = i + 1;
      }
    }
    // The rest of an image still open (from its D8 on when it began here: its FF is already pending).
    if (this.inFrame) this.append(chunk.subarray(start, chunk.length));
    this.lastWasFf = chunk.length > 0 ? chunk[chunk.length - 1] === 0xff : this.lastWasFf;
    return frames;
  }

  private append(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.pendingBytes > this.maxBytes) {
      this.pending = [];
      this.pendingBytes = 0;
      this.inFrame = false;
      throw new OversizedFrameError(this.maxBytes);
    }
  }
}
