import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import type { RgbImage } from '../inference/roles.js';

/** Thrown when the bytes are not an image sharp can decode (wrong format, truncated, empty). */
export class UndecodableImageError extends Error {
  constructor(reason: string) {
    super(`not a decodable image: ${reason}`);
    this.name = 'UndecodableImageError';
  }
}

/**
 * Decodes an image file or buffer to packed RGB: EXIF orientation applied, alpha dropped, grey expanded to RGB,
 * only the first frame of animated images. A missing file rejects with the filesystem error, not UndecodableImageError.
 */
export async function decodeImage(input: Buffer | string): Promise<RgbImage> {
  // Reading the file ourselves keeps "file missing" (ENOENT) distinct from "file is not an image".
  const bytes = typeof input === 'string' ? await readFile(input) : input;
  if (bytes.length === 0) throw new UndecodableImageError('empty input');
  try {
    const { data, info } = await sharp(bytes, { failOn: 'error', pages: 1 })
      .rotate()
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new UndecodableImageError(`unexpected ${info.channels} channels after decoding`);
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
  } catch (error) {
    if (error instanceof UndecodableImageError) throw error;
    throw new UndecodableImageError((error as Error).message);
  }
}
