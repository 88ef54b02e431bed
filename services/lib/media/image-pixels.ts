import { open } from 'node:fs/promises';
import sharp from 'sharp';
import { bmpDimensions, isBmp, type ImageDimensions } from './bmp.js';

/** The most pixels any image may have to be decoded at all: sharp's own default limit (16383 × 16383). */
export const MAX_DECODABLE_PIXELS = 0x3fff * 0x3fff;

/** Thrown when an image's header states more pixels than allowed; nothing has been decoded. */
export class ImageTooLargeError extends Error {
  constructor(
    readonly width: number,
    readonly height: number,
    readonly maxPixels: number,
  ) {
    super(`image of ${width}×${height} pixels exceeds the limit of ${maxPixels} pixels`);
    this.name = 'ImageTooLargeError';
  }
}

// Enough for every header size a BMP may have before its pixel data (the 124-byte V5 header ends at byte 138).
const BMP_HEADER_BYTES = 138;

async function headBytes(file: string, length: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * The dimensions an image's header states, read without decoding a pixel (BMP by its header, the others by sharp's
 * header read, first frame of animations); undefined when the header cannot be read (not an image, truncated).
 */
export async function imageDimensions(input: Buffer | string): Promise<ImageDimensions | undefined> {
  const head = typeof input === 'string' ? await headBytes(input, BMP_HEADER_BYTES) : input;
  if (isBmp(head)) return bmpDimensions(head);
  try {
    // No pixel limit for reading the header: the caller wants the real size to judge it.
    const { width, height } = await sharp(input, { pages: 1, limitInputPixels: false }).metadata();
    return width && height ? { width, height } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Refuses, before anything is decoded, an image whose header states more than `maxPixels` pixels (ImageTooLargeError):
 * a small file can claim 60000 × 60000 pixels, which decoded would take 10 GB. An unreadable header passes: decoding
 * reports that.
 */
export async function assertImagePixels(input: Buffer | string, maxPixels: number): Promise<void> {
  const size = await imageDimensions(input);
  if (size && size.width * size.height > maxPixels) throw new ImageTooLargeError(size.width, size.height, maxPixels);
}
