import { spawn } from 'node:child_process';
import type { RgbImage } from '../inference/roles.js';

/** Width and height of an image in pixels, as its header states them. */
export interface ImageDimensions {
  width: number;
  height: number;
}

/** True when the bytes start with a BMP file header ("BM"). */
export function isBmp(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x42 && bytes[1] === 0x4d;
}

/**
 * The dimensions a BMP header states, read without decoding (sharp cannot read BMP, so not even its header), or
 * undefined when the header is missing or truncated. A negative height (top-down rows) counts by its size.
 */
export function bmpDimensions(bytes: Uint8Array): ImageDimensions | undefined {
  if (!isBmp(bytes) || bytes.length < 26) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const infoSize = view.getUint32(14, true);
  // BITMAPCOREHEADER (OS/2 1.x) stores 16-bit sizes; every later header (40, 52, 56, 64, 108, 124 bytes) 32-bit ones.
  if (infoSize === 12) return { width: view.getUint16(18, true), height: view.getUint16(20, true) };
  if (infoSize < 40) return undefined;
  return { width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) };
}

/** Why ffmpeg could not turn the BMP into pixels (bad data, a header that lies about the size). */
export class BmpDecodeError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'BmpDecodeError';
  }
}

/**
 * Decodes a BMP (1/4/8-bit palette, 16/24/32-bit, RLE) to packed RGB with ffmpeg's decoder, which libvips lacks.
 * The bytes go in on stdin and exactly width × height × 3 bytes of RGB are expected back: more than the header
 * promised stops ffmpeg at once, so memory stays bounded by the dimensions the caller already accepted.
 */
export function decodeBmp(bytes: Buffer, size: ImageDimensions, ffmpeg: string): Promise<RgbImage> {
  const expected = size.width * size.height * 3;
  return new Promise((resolve, reject) => {
    const child = spawn(
      ffmpeg,
      [
        ...['-hide_banner', '-loglevel', 'error', '-threads', '1'],
        ...['-f', 'bmp_pipe', '-i', 'pipe:0'],
        ...['-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const out = Buffer.alloc(expected);
    let received = 0;
    let overflow = false;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (received + chunk.length > expected) {
        overflow = true;
        child.kill('SIGKILL');
        return;
      }
      chunk.copy(out, received);
      received += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-500)));
    // ffmpeg may stop reading early (bad data): the write then fails with EPIPE, and the exit status tells why.
    child.stdin.on('error', () => undefined);
    child.once('error', reject);
    child.once('close', (code) => {
      if (overflow) return reject(new BmpDecodeError('the pixel data is larger than the header states'));
      if (code !== 0) return reject(new BmpDecodeError(stderr.trim() || `ffmpeg exited with ${code}`));
      if (received !== expected) return reject(new BmpDecodeError('the pixel data is shorter than the header states'));
      resolve({ data: new Uint8Array(out.buffer, out.byteOffset, out.length), width: size.width, height: size.height });
    });
    child.stdin.end(bytes);
  });
}
