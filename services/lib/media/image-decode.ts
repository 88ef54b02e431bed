import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import type { RgbImage } from '../inference/roles.js';
import { bmpDimensions, decodeBmp, isBmp } from './bmp.js';
import { bundledFfmpegPaths } from './ffmpeg-paths.js';

/** Thrown when the bytes are not an image that can be decoded (wrong format, truncated, empty). */
export class UndecodableImageError extends Error {
  constructor(reason: string) {
    super(`not a decodable image: ${reason}`);
    this.name = 'UndecodableImageError';
  }
}

/** How decodeImage works: which ffmpeg decodes BMP (libvips has no BMP loader). */
export interface DecodeImageOptions {
  /** ffmpeg executable for BMP; the bundled one when omitted. */
  ffmpeg?: string;
}

/**
 * Decodes an image file or buffer to packed RGB: EXIF orientation applied, alpha dropped, grey expanded to RGB,
 * only the first frame of animated images. JPEG, PNG, WebP and GIF go through sharp, BMP through ffmpeg. A missing
 * file rejects with the filesystem error, not UndecodableImageError.
 */
export async function decodeImage(input: Buffer | string, options: DecodeImageOptions = {}): Promise<RgbImage> {
  // Reading the file ourselves keeps "file missing" (ENOENT) distinct from "file is not an image".
  const bytes = typeof input === 'string' ? await readFile(input) : input;
  if (bytes.length === 0) throw new UndecodableImageError('empty input');
  if (isBmp(bytes)) return decodeBmpImage(bytes, options);
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

async function decodeBmpImage(bytes: Buffer, options: DecodeImageOptions): Promise<RgbImage> {
  const size = bmpDimensions(bytes);
  if (!size || size.width === 0 || size.height === 0) throw new UndecodableImageError('BMP header is missing or empty');
  try {
    return await decodeBmp(bytes, size, options.ffmpeg ?? bundledFfmpegPaths().ffmpeg);
  } catch (error) {
    throw new UndecodableImageError((error as Error).message);
  }
}
