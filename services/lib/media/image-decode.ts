import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import type { RgbImage } from '../inference/roles.js';
import { bmpDimensions, decodeBmp, isBmp } from './bmp.js';
import { bundledFfmpegPaths } from './ffmpeg-paths.js';
import { ImageTooLargeError, imageDimensions, MAX_DECODABLE_PIXELS } from './image-pixels.js';

/** Thrown when the bytes are not an image that can be decoded (wrong format, truncated, empty). */
export class UndecodableImageError extends Error {
  constructor(reason: string) {
    super(`not a decodable image: ${reason}`);
    this.name = 'UndecodableImageError';
  }
}

/** How decodeImage works: its pixel limit, and which ffmpeg decodes BMP (libvips has no BMP loader). */
export interface DecodeImageOptions {
  /** Images stating more pixels are refused before decoding (ImageTooLargeError); default MAX_DECODABLE_PIXELS. */
  maxPixels?: number;
  /** ffmpeg executable for BMP; the bundled one when omitted. */
  ffmpeg?: string;
}

/**
 * Decodes an image file or buffer to packed RGB: EXIF orientation applied, alpha dropped, grey expanded to RGB,
 * only the first frame of animated images. JPEG, PNG, WebP and GIF go through sharp, BMP through ffmpeg. Memory is
 * bounded by `maxPixels`, checked against the header first. A missing file rejects with the filesystem error, not
 * UndecodableImageError.
 */
export async function decodeImage(input: Buffer | string, options: DecodeImageOptions = {}): Promise<RgbImage> {
  // Reading the file ourselves keeps "file missing" (ENOENT) distinct from "file is not an image".
  const bytes = typeof input === 'string' ? await readFile(input) : input;
  if (bytes.length === 0) throw new UndecodableImageError('empty input');
  const maxPixels = options.maxPixels ?? MAX_DECODABLE_PIXELS;
  if (isBmp(bytes)) return decodeBmpImage(bytes, maxPixels, options);
  try {
    const { data, info } = await sharp(bytes, { failOn: 'error', pages: 1, limitInputPixels: maxPixels })
      .rotate()
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new UndecodableImageError(`unexpected ${info.channels} channels after decoding`);
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
  } catch (error) {
    if (error instanceof UndecodableImageError) throw error;
    // libvips refuses from the header, before it allocates: say so with the dimensions it refused.
    const size = /pixel limit/i.test((error as Error).message) ? await imageDimensions(bytes) : undefined;
    if (size) throw new ImageTooLargeError(size.width, size.height, maxPixels);
    throw new UndecodableImageError((error as Error).message);
  }
}

async function decodeBmpImage(bytes: Buffer, maxPixels: number, options: DecodeImageOptions): Promise<RgbImage> {
  const size = bmpDimensions(bytes);
  if (!size || size.width === 0 || size.height === 0) throw new UndecodableImageError('BMP header is missing or empty');
  if (size.width * size.height > maxPixels) throw new ImageTooLargeError(size.width, size.height, maxPixels);
  try {
    return await decodeBmp(bytes, size, options.ffmpeg ?? bundledFfmpegPaths().ffmpeg);
  } catch (error) {
    throw new UndecodableImageError((error as Error).message);
  }
}
