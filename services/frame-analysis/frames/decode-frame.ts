import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import type { RgbImage } from '../../lib/inference/index.js';

/** Formats a frame may have, judged by its bytes (never by its name or declared type). */
const ACCEPTED_MIME = new Set(['image/jpeg', 'image/png', 'image/webp']);

/**
 * Frames are analysed at this longest side at most: the pose model sees 256×256, and every measure the patterns use
 * is a ratio (box overlap, lengths in torso lengths), so shrinking on load (JPEG DCT scaling) loses nothing they read.
 */
export const ANALYSIS_MAX_SIDE = 512;

/** Why a frame was refused, as the `invalid_frames` reasons say it. */
export const FrameRejection = {
  tooLarge: (maxBytes: number) => `frame exceeds the ${Math.round(maxBytes / (1024 * 1024))} MB limit`,
  empty: 'frame is empty',
  format: 'not a valid image format (JPEG, PNG or WebP expected)',
  tooManyPixels: (maxPixels: number) => `image exceeds ${maxPixels} pixels`,
  undecodable: 'image could not be decoded',
} as const;

/** A decoded frame, or why it cannot be used. */
export type DecodedFrame = { ok: true; image: RgbImage } | { ok: false; reason: string };

/**
 * Checks a frame by its bytes (JPEG, PNG or WebP signature), bounds its decoded size by `maxPixels` before decoding,
 * and decodes it to RGB (EXIF orientation applied, shrunk to ANALYSIS_MAX_SIDE).
 */
export async function decodeFrame(bytes: Buffer, maxPixels: number): Promise<DecodedFrame> {
  if (bytes.length === 0) return { ok: false, reason: FrameRejection.empty };
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !ACCEPTED_MIME.has(type.mime)) return { ok: false, reason: FrameRejection.format };
  try {
    const { data, info } = await sharp(bytes, { limitInputPixels: maxPixels, failOn: 'error' })
      .rotate()
      .resize(ANALYSIS_MAX_SIDE, ANALYSIS_MAX_SIDE, { fit: 'inside', withoutEnlargement: true })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) return { ok: false, reason: FrameRejection.undecodable };
    return { ok: true, image: { data: new Uint8Array(data.buffer, data.byteOffset, data.length), ...size(info) } };
  } catch (error) {
    if (/pixel limit/i.test((error as Error).message))
      return { ok: false, reason: FrameRejection.tooManyPixels(maxPixels) };
    return { ok: false, reason: FrameRejection.undecodable };
  }
}

function size(info: { width: number; height: number }): { width: number; height: number } {
  return { width: info.width, height: info.height };
}
