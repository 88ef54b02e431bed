import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { fixtureImage, removeTestMediaCache, runFfmpeg, writeTestFile } from '../../test/support/media.js';
import { imageDescriptor, type ImageEmbedder } from '../lib/inference/index.js';
import { decodeImage } from '../lib/media/index.js';
import { LocalObjectStore } from '../lib/storage/index.js';
import { postForm } from './testing/http-client.js';
import { startHarness, testModels, type Harness } from './testing/harness.js';

/** The reference photo, small so that every format stays a few KB; PNG is lossless, so its pixels are the truth. */
async function referencePng(): Promise<Buffer> {
  return sharp(fixtureImage('chelsea.png')).resize(160, 120, { fit: 'fill' }).png().toBuffer();
}

/**
 * The same photo as a BMP written by ffmpeg in the given pixel format (bgr24: 24-bit, bgra: 32-bit, pal8: 8-bit
 * palette, with a palette made for the photo rather than ffmpeg's fixed 3-3-2 one).
 */
async function bmpOf(png: Buffer, pixFmt: string): Promise<Buffer> {
  const source = await writeTestFile(`bmp-source-${pixFmt}.png`, png);
  const target = source.replace(/\.png$/, '.bmp');
  const palette = pixFmt === 'pal8' ? ['-vf', 'split[a][b];[a]palettegen[p];[b][p]paletteuse'] : [];
  await runFfmpeg(['-i', source, ...palette, '-frames:v', '1', '-c:v', 'bmp', '-pix_fmt', pixFmt, target]);
  return readFile(target);
}

/**
 * Every image format the contract accepts for POST /media/upload (.jpg, .jpeg, .png, .webp, .bmp, .gif), each a
 * real file of that format made now from one photo: stored with a 201, and its one embedding (detection off) is the
 * photo's, so a format that decoded to the wrong pixels (flipped rows, swapped channels) would show.
 */
describe('POST /media/upload decodes every accepted image format', () => {
  let h: Harness;
  let root: string;
  let png: Buffer;
  let reference: Float32Array;
  let embedder: ImageEmbedder;
  const bucket = 'image-formats';

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'dataprep-formats-'));
    h = await startHarness(new LocalObjectStore(path.join(root, 'media')));
    png = await referencePng();
    const models = await testModels();
    // Through the descriptor the service stores vectors with.
    embedder = imageDescriptor(models.imageEmbedder, h.config.imageDescriptor);
    [reference] = await embedder.embed([await decodeImage(png)]);
  });

  afterAll(async () => {
    await h?.close();
    await rm(root, { recursive: true, force: true });
    await removeTestMediaCache();
  });

  // Lossless formats must give the PNG's embedding exactly; the lower bound of the others leaves room for lossy
  // encodings (JPEG, WebP) and 256-colour quantisation (GIF, 8-bit BMP), and stays above what another photo scores.
  const LOSSY = 0.9;
  const LOSSLESS = 0.999;

  it('the lossy bound tells this photo from another', async () => {
    const other = await sharp(fixtureImage('rocket.jpg')).resize(160, 120, { fit: 'fill' }).png().toBuffer();
    const [otherVector] = await embedder.embed([await decodeImage(other)]);
    const cosine = reference.reduce((sum, value, i) => sum + value * otherVector[i], 0);
    expect(cosine).toBeLessThan(LOSSY);
  });

  const formats: Array<[string, string, () => Promise<Buffer>, number]> = [
    ['JPEG', 'photo.jpg', () => sharp(png).jpeg({ quality: 90 }).toBuffer(), LOSSY],
    ['JPEG (.jpeg)', 'photo.jpeg', () => sharp(png).jpeg({ quality: 85 }).toBuffer(), LOSSY],
    ['PNG', 'photo.png', async () => png, LOSSLESS],
    ['WebP', 'photo.webp', () => sharp(png).webp({ quality: 90 }).toBuffer(), LOSSY],
    ['GIF', 'photo.gif', () => sharp(png).gif().toBuffer(), LOSSY],
    ['24-bit BMP', 'photo24.bmp', () => bmpOf(png, 'bgr24'), LOSSLESS],
    ['32-bit BMP', 'photo32.bmp', () => bmpOf(png, 'bgra'), LOSSLESS],
    ['8-bit palette BMP', 'photo8.bmp', () => bmpOf(png, 'pal8'), LOSSY],
  ];

  it.each(formats)('%s', async (_name, filename, make, minScore) => {
    const bytes = await make();
    const response = await postForm(`${h.base}/media/upload?bucket_name=${bucket}&enable_object_detection=false`, {
      bytes,
      filename,
    });
    const body = await response.json();
    expect(response.status).toBe(201);
    expect(body.status).toBe('success');
    const byVideo = { equals: { bucket_name: bucket, video_id: body.video_id } };
    expect(await h.vectorStore.count(byVideo)).toBe(1);
    const [hit] = await h.vectorStore.search(reference, 1, byVideo);
    expect(hit.score).toBeGreaterThan(minScore);
    // The same bytes again would be a duplicate of this upload: remove it so each format is judged alone.
    expect((await fetch(`${h.base}/media/${bucket}/${body.video_id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('answers 400 for a BMP whose pixel data is cut short, storing nothing', async () => {
    const whole = await bmpOf(png, 'bgr24');
    const response = await postForm(`${h.base}/media/upload?bucket_name=${bucket}`, {
      bytes: whole.subarray(0, 2000),
      filename: 'cut.bmp',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ status: 'error', message: 'The image could not be decoded' });
    expect(await h.objectStore.list(bucket)).toEqual([]);
  });
});
