import { describe, expect, it } from '@jest/globals';
import path from 'node:path';
import sharp from 'sharp';
import { decodeImage, UndecodableImageError } from './image-decode.js';
import { FIXTURE_IMAGES_DIR } from '../../../test/support/fixtures.js';

// Test photos live in the repository's test/fixtures when vendored there, else in the shared design folder.
const FIXTURES = FIXTURE_IMAGES_DIR;

/** A width×height image whose left half is red and right half blue, so orientation is observable. */
async function halfRedHalfBlue(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      if (x < width / 2) raw[i] = 255;
      else raw[i + 2] = 255;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

function pixel(image: { data: Uint8Array; width: number }, x: number, y: number): number[] {
  const i = (y * image.width + x) * 3;
  return Array.from(image.data.subarray(i, i + 3));
}

describe('decodeImage', () => {
  it('decodes a real JPEG file to packed RGB', async () => {
    const image = await decodeImage(path.join(FIXTURES, 'pexels_double_decker_bus.jpg'));
    expect([image.width, image.height]).toEqual([546, 413]);
    expect(image.data.length).toBe(546 * 413 * 3);
  });

  it('applies EXIF orientation', async () => {
    const png = await halfRedHalfBlue(40, 20);
    // Orientation 6: the stored pixels must be turned 90° clockwise for display.
    const jpeg = await sharp(png).jpeg({ quality: 95 }).withMetadata({ orientation: 6 }).toBuffer();
    const image = await decodeImage(jpeg);
    expect([image.width, image.height]).toEqual([20, 40]);
    const [topR, , topB] = pixel(image, 10, 5);
    const [bottomR, , bottomB] = pixel(image, 10, 35);
    expect(topR).toBeGreaterThan(200);
    expect(topB).toBeLessThan(60);
    expect(bottomB).toBeGreaterThan(200);
    expect(bottomR).toBeLessThan(60);
  });

  it('drops alpha and expands grey to RGB', async () => {
    const rgba = await sharp({
      create: { width: 4, height: 3, channels: 4, background: { r: 10, g: 20, b: 30, alpha: 0.5 } },
    })
      .png()
      .toBuffer();
    const grey = await sharp(Buffer.from([0, 50, 100, 150, 200, 250]), { raw: { width: 3, height: 2, channels: 1 } })
      .png()
      .toBuffer();
    const a = await decodeImage(rgba);
    expect(a.data.length).toBe(4 * 3 * 3);
    expect(pixel(a, 3, 2)).toEqual([10, 20, 30]);
    const g = await decodeImage(grey);
    expect(g.data.length).toBe(3 * 2 * 3);
    expect(pixel(g, 2, 0)).toEqual([100, 100, 100]);
  });

  it('returns the first frame of an animated GIF', async () => {
    const frame = (r: number, b: number) =>
      sharp({ create: { width: 8, height: 6, channels: 3, background: { r, g: 0, b } } })
        .png()
        .toBuffer();
    const gif = await sharp([await frame(255, 0), await frame(0, 255)], { join: { animated: true } })
      .gif()
      .toBuffer();
    const image = await decodeImage(gif);
    expect([image.width, image.height]).toEqual([8, 6]);
    expect(pixel(image, 4, 3)[0]).toBeGreaterThan(200);
    expect(pixel(image, 4, 3)[2]).toBeLessThan(60);
  });

  it('rejects non-images with UndecodableImageError and keeps missing files distinct', async () => {
    await expect(decodeImage(Buffer.from('definitely not an image'))).rejects.toBeInstanceOf(UndecodableImageError);
    await expect(decodeImage(Buffer.alloc(0))).rejects.toBeInstanceOf(UndecodableImageError);
    const png = await halfRedHalfBlue(16, 16);
    await expect(decodeImage(png.subarray(0, 40))).rejects.toBeInstanceOf(UndecodableImageError);
    await expect(decodeImage(path.join(FIXTURES, 'no-such-file.png'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
