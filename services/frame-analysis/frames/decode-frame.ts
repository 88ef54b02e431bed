import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import type { RgbImage } from '../../lib/inference/index.js';

/** Formats a frame may have, judged by its bytes (never by its name or declared type). */
const ACCEPTED_MIME = new Set(['image/jpeg', 'image/png', 'image/webp']);

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
 * and decodes it to RGB with its EXIF orientation applied, shrunk on load to fit `maxSide` (never enlarged). The
 * service passes the pose model's input size: the model sees no more than that, and every measure the patterns use
 * is a ratio (box overlap, lengths in torso lengths), so decoding more pixels would only cost time.
 */
export async function decodeFrame(bytes: Buffer, maxPixels: number, maxSide: number): Promise<DecodedFrame> {
  if (bytes.length === 0) return { ok: false, reason: FrameRejection.empty };
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !ACCEPTED_MIME.has(type.mime)) return { ok: false, reason: FrameRejection.format };
  try {
    const { data, info } = await sharp(bytes, { limitInputPixels: maxPixels, failOn: 'error' })
      .rotate()
      .resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true, kernel: 'linear' })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) return { ok: false, reason: FrameRejection.undecodable };
    const pixels = new Uint8Array(data.buffer, data.byteOffset, data.length);
    return { ok: true, image: { data: pixels, width: info.width, height: info.height } };
  } catch (error) {
    if (/pixel limit/i.test((error as Error).message))
      return { ok: false, reason: FrameRejection.tooManyPixels(maxPixels) };
    return { ok: false, reason: FrameRejection.undecodable };
  }
}
