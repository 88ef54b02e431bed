import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { ObjectTooLargeError } from './object-store.js';

/**
 * Pass-through that hashes (SHA-256) and counts the bytes flowing through it, and fails with ObjectTooLargeError the
 * moment the count passes `maxBytes`, so a pipeline stops reading the source right there.
 */
export class MeasuringStream extends Transform {
  private readonly hash: Hash = createHash('sha256');
  private count = 0;

  constructor(private readonly maxBytes: number = Number.POSITIVE_INFINITY) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.maxBytes) {
      callback(new ObjectTooLargeError(this.maxBytes));
      return;
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }

  /** Bytes seen so far. */
  get bytes(): number {
    return this.count;
  }

  /** Hex SHA-256 of everything seen; call once, after the stream has ended. */
  digest(): string {
    return this.hash.digest('hex');
  }
}

/** Validates `maxBytes` from PutOptions: a non-negative integer, or undefined for no limit. */
export function checkedLimit(maxBytes: number | undefined): number {
  if (maxBytes === undefined) return Number.POSITIVE_INFINITY;
  if (!Number.isInteger(maxBytes) || maxBytes < 0) throw new RangeError(`maxBytes must be a non-negative integer`);
  return maxBytes;
}

/** Validates an inclusive byte range; the end may lie past the object (it is clamped by the store). */
export function assertValidRange(range: { start: number; end: number }): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new RangeError(`invalid byte range ${start}-${end}`);
  }
}
