import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { fixtureImage, removeTestMediaCache, runFfmpeg, writeTestFile } from '../../test/support/media.js';
import { decodeImage, ImageTooLargeError, imageDimensions } from '../lib/media/index.js';
import { LocalObjectStore } from '../lib/storage/index.js';
import { postForm, postJson } from './testing/http-client.js';
import { startHarness, type Harness } from './testing/harness.js';

const BOMB = 60_000;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A small real photo in `format`, a few KB. */
function small(format: 'png' | 'jpeg' | 'webp' | 'gif'): Promise<Buffer> {
  return sharp(fixtureImage('coffee.png')).resize(32, 24, { fit: 'fill' }).toFormat(format).toBuffer();
}

/** PNG: IHDR's width and height, with the chunk's CRC recomputed so that the header is valid. */
async function pngBomb(): Promise<Buffer> {
  const bytes = Buffer.from(await small('png'));
  bytes.writeUInt32BE(BOMB, 16);
  bytes.writeUInt32BE(BOMB, 20);
  bytes.writeUInt32BE(crc32(bytes.subarray(12, 29)), 29);
  return bytes;
}

/** JPEG: the frame header (SOF0) states the size. */
async function jpegBomb(): Promise<Buffer> {
  const bytes = Buffer.from(await small('jpeg'));
  const sof = bytes.indexOf(Buffer.from([0xff, 0xc0]));
  bytes.writeUInt16BE(BOMB, sof + 5);
  bytes.writeUInt16BE(BOMB, sof + 7);
  return bytes;
}

/** WebP (lossy): 14-bit sizes in the VP8 frame header, so at most 16383 × 16383 — still 268 MP. */
async function webpBomb(): Promise<Buffer> {
  const bytes = Buffer.from(await small('webp'));
  expect(bytes.toString('latin1', 12, 16)).toBe('VP8 ');
  bytes.writeUInt16LE(0x3fff, 26);
  bytes.writeUInt16LE(0x3fff, 28);
  return bytes;
}

/** GIF: the logical screen and the first image descriptor. */
async function gifBomb(): Promise<Buffer> {
  const bytes = Buffer.from(await small('gif'));
  bytes.writeUInt16LE(BOMB, 6);
  bytes.writeUInt16LE(BOMB, 8);
  const packed = bytes[10];
  const globalTable = packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0;
  let at = 13 + globalTable;
  // Skip extension blocks (0x21 label, sub-blocks) to the image descriptor (0x2c).
  while (bytes[at] === 0x21) {
    at += 2;
    while (bytes[at] !== 0) at += bytes[at] + 1;
    at += 1;
  }
  expect(bytes[at]).toBe(0x2c);
  bytes.writeUInt16LE(BOMB, at + 5);
  bytes.writeUInt16LE(BOMB, at + 7);
  return bytes;
}

/** BMP (24-bit, written by ffmpeg): the info header states the size. */
async function bmpBomb(): Promise<Buffer> {
  const source = await writeTestFile('bomb-source.png', await small('png'));
  const target = source.replace(/\.png$/, '.bmp');
  await runFfmpeg(['-i', source, '-frames:v', '1', '-c:v', 'bmp', '-pix_fmt', 'bgr24', target]);
  const bytes = await readFile(target);
  bytes.writeInt32LE(BOMB, 18);
  bytes.writeInt32LE(BOMB, 22);
  return bytes;
}

const BOMBS: Array<[string, string, () => Promise<Buffer>, number, number]> = [
  ['PNG', 'bomb.png', pngBomb, BOMB, BOMB],
  ['JPEG', 'bomb.jpg', jpegBomb, BOMB, BOMB],
  ['WebP', 'bomb.webp', webpBomb, 0x3fff, 0x3fff],
  ['GIF', 'bomb.gif', gifBomb, BOMB, BOMB],
  ['BMP', 'bomb.bmp', bmpBomb, BOMB, BOMB],
];

/**
 * Pixel bombs: small files whose headers claim enormous images. Each is refused with 413 and the documented message
 * from its header alone, before a pixel is decoded (decoding 60000 × 60000 would take 10 GB), and nothing is kept.
 */
describe('pixel limit (MM_DATAPREP_IMAGE_MAX_PIXELS)', () => {
  let h: Harness;
  let root: string;
  const bucket = 'pixel-bombs';

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'dataprep-pixels-'));
    h = await startHarness(new LocalObjectStore(path.join(root, 'media')));
  });

  afterAll(async () => {
    await h?.close();
    await rm(root, { recursive: true, force: true });
    await removeTestMediaCache();
  });

  const limit = 50_000_000;
  const message = (width: number, height: number, max = limit) =>
    `Image too large: ${width}×${height} pixels, the limit is ${max} pixels`;

  it.each(BOMBS)('%s: the header is read, not decoded', async (_name, _file, make, width, height) => {
    const bytes = await make();
    expect(bytes.length).toBeLessThan(16 * 1024);
    expect(await imageDimensions(bytes)).toEqual({ width, height });
    // The decoder refuses it too, from the header, whatever path leads to it.
    await expect(decodeImage(bytes, { maxPixels: limit })).rejects.toBeInstanceOf(ImageTooLargeError);
  });

  it.each(BOMBS)(
    '%s: POST /media/upload answers 413 and keeps nothing',
    async (_name, filename, make, width, height) => {
      const response = await postForm(`${h.base}/media/upload?bucket_name=${bucket}`, {
        bytes: await make(),
        filename,
      });
      expect(response.status).toBe(413);
      expect(await response.json()).toEqual({ status: 'error', message: message(width, height) });
      expect(await h.objectStore.list(bucket)).toEqual([]);
    },
  );

  it('POST /media/ingest (base64) answers 413 the same way', async () => {
    const response = await postJson(`${h.base}/media/ingest`, {
      type: 'image_base64',
      image_base64: (await pngBomb()).toString('base64'),
      bucket_name: bucket,
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ status: 'error', message: message(BOMB, BOMB) });
    expect(await h.objectStore.list(bucket)).toEqual([]);
  });

  it('the limit is configurable: a 160×120 photo is refused under 10000 pixels and stored at the default', async () => {
    const photo = await sharp(fixtureImage('rocket.jpg')).resize(160, 120, { fit: 'fill' }).jpeg().toBuffer();
    const strict = await h.variant({ env: { MM_DATAPREP_IMAGE_MAX_PIXELS: '10000' } });
    const refused = await postForm(`${strict.url}/v1/dataprep/media/upload?bucket_name=${bucket}`, {
      bytes: photo,
      filename: 'rocket.jpg',
    });
    expect(refused.status).toBe(413);
    expect(await refused.json()).toEqual({ status: 'error', message: message(160, 120, 10_000) });
    const stored = await postForm(`${h.base}/media/upload?bucket_name=${bucket}&enable_object_detection=false`, {
      bytes: photo,
      filename: 'rocket.jpg',
    });
    expect(stored.status).toBe(201);
  });
});
