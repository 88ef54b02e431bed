import sharp from 'sharp';
import type { RgbImage } from '../../lib/inference/index.js';
import { decodeImage } from '../../lib/media/index.js';

/** Image formats a frame may be kept in, by their first bytes. */
const FORMATS = [
  { ext: 'jpg', contentType: 'image/jpeg', magic: (b: Buffer) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { ext: 'png', contentType: 'image/png', magic: (b: Buffer) => b.readUInt32BE(0) === 0x89504e47 },
  {
    ext: 'webp',
    contentType: 'image/webp',
    magic: (b: Buffer) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP',
  },
  { ext: 'gif', contentType: 'image/gif', magic: (b: Buffer) => b.toString('latin1', 0, 4) === 'GIF8' },
] as const;

/** Extensions of kept frames and the content type each is served with. */
export const FRAME_CONTENT_TYPES: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(FORMATS.map((f) => [f.ext, f.contentType])),
);

/** A frame that decoded: its bytes as sent, the format, and its pixels for the image embedder. */
export interface FrameImage {
  kind: 'image';
  bytes: Buffer;
  ext: string;
  contentType: string;
  rgb: RgbImage;
}

/** What `image_data` turned out to be when it is no frame to keep, and why (told to the client). */
export interface NotKept {
  kind: 'not-kept';
  reason: string;
}

/** Limits on a kept frame. */
export interface FrameLimits {
  maxBytes: number;
  maxPixels: number;
}

const DATA_URL = /^data:[\w.+/-]*;base64,/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Reads `image_data` as a frame: base64 (standard or URL-safe, or a `data:` URL) of a JPEG, PNG, WebP or GIF image
 * within the limits. Anything else (a caption payload, an undecodable or oversized image) is `not-kept` with the
 * reason, never an error: the caption is what the request is for.
 */
export async function readFrameImage(imageData: string, limits: FrameLimits): Promise<FrameImage | NotKept> {
  const base64 = imageData.trim().replace(DATA_URL, '').replace(/\s+/g, '');
  // Only the head is decoded before the format is known, so a caption payload costs next to nothing.
  if (base64.length < 16 || !BASE64.test(base64.slice(0, 64))) return { kind: 'not-kept', reason: 'not base64' };
  const format = FORMATS.find((f) => f.magic(Buffer.from(base64.slice(0, 16), 'base64')));
  if (!format) return { kind: 'not-kept', reason: 'not a JPEG, PNG, WebP or GIF image' };
  if (Math.floor((base64.length * 3) / 4) > limits.maxBytes + 2) {
    return { kind: 'not-kept', reason: `frame over ${limits.maxBytes} bytes` };
  }
  if (!BASE64.test(base64)) return { kind: 'not-kept', reason: 'not base64' };
  const bytes = Buffer.from(base64, 'base64');
  try {
    const { width = 0, height = 0 } = await sharp(bytes).metadata();
    if (width * height > limits.maxPixels) {
      return { kind: 'not-kept', reason: `frame over ${limits.maxPixels} pixels` };
    }
    return { kind: 'image', bytes, ext: format.ext, contentType: format.contentType, rgb: await decodeImage(bytes) };
  } catch {
    return { kind: 'not-kept', reason: `not a decodable ${format.ext} image` };
  }
}
