import { afterAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { fixtureImage, makeTestVideo, removeTestMediaCache, writeTestFile } from '../../../test/support/media.js';
import { ACCEPTED_EXTENSIONS, detectMediaType, mediaTypeFromName, withDetectedExtension } from './media-type.js';

afterAll(removeTestMediaCache);

const tiny = () => sharp({ create: { width: 8, height: 8, channels: 3, background: '#c33' } });

describe('detectMediaType', () => {
  it('recognises every accepted image format from its bytes', async () => {
    const encoded = {
      jpg: await tiny().jpeg().toBuffer(),
      png: await tiny().png().toBuffer(),
      webp: await tiny().webp().toBuffer(),
      gif: await tiny().gif().toBuffer(),
    };
    for (const [ext, bytes] of Object.entries(encoded)) {
      expect(await detectMediaType(bytes)).toEqual({
        kind: 'image',
        ext,
        mime: `image/${ext === 'jpg' ? 'jpeg' : ext}`,
      });
    }
    // sharp cannot write BMP: a minimal 1×1 24-bit BMP.
    const bmp = Buffer.alloc(58);
    bmp.write('BM', 0, 'latin1');
    bmp.writeUInt32LE(58, 2);
    bmp.writeUInt32LE(54, 10);
    bmp.writeUInt32LE(40, 14);
    bmp.writeInt32LE(1, 18);
    bmp.writeInt32LE(1, 22);
    bmp.writeUInt16LE(1, 26);
    bmp.writeUInt16LE(24, 28);
    expect(await detectMediaType(bmp)).toEqual({ kind: 'image', ext: 'bmp', mime: 'image/bmp' });
  });

  it('recognises an MP4 file by path and a real photo by bytes', async () => {
    const video = await makeTestVideo({ seconds: 1, fps: 10, width: 64, height: 48 });
    expect(await detectMediaType(video)).toEqual({ kind: 'video', ext: 'mp4', mime: 'video/mp4' });
    const photo = await readFile(fixtureImage('pexels_double_decker_bus.jpg'));
    expect(await detectMediaType(photo.subarray(0, 4100))).toEqual({ kind: 'image', ext: 'jpg', mime: 'image/jpeg' });
  });

  it('trusts content over the name: a PNG named .jpg is a PNG', async () => {
    const file = await writeTestFile('holiday.jpg', await tiny().png().toBuffer());
    const type = (await detectMediaType(file))!;
    expect(type).toEqual({ kind: 'image', ext: 'png', mime: 'image/png' });
    expect(withDetectedExtension('holiday.jpg', type)).toBe('holiday.png');
    expect(withDetectedExtension('holiday.jpeg', { kind: 'image', ext: 'jpg', mime: 'image/jpeg' })).toBe(
      'holiday.jpeg',
    );
    expect(withDetectedExtension('noext', type)).toBe('noext.png');
  });

  it('rejects text, unsupported formats and empty input', async () => {
    const text = await writeTestFile('readme.mp4', 'hello, I am text pretending to be a video\n');
    expect(await detectMediaType(text)).toBeUndefined();
    expect(await detectMediaType(await tiny().tiff().toBuffer())).toBeUndefined();
    expect(await detectMediaType(new Uint8Array(0))).toBeUndefined();
  });
});

describe('mediaTypeFromName', () => {
  it('maps accepted extensions case-insensitively and nothing else', () => {
    expect(mediaTypeFromName('clip.MP4')).toEqual({ kind: 'video', ext: 'mp4', mime: 'video/mp4' });
    expect(mediaTypeFromName('a.jpeg')?.mime).toBe('image/jpeg');
    expect(mediaTypeFromName('a.mov')).toBeUndefined();
    expect(mediaTypeFromName('a')).toBeUndefined();
    expect(ACCEPTED_EXTENSIONS).toEqual(['mp4', 'jpg', 'jpeg', 'png', 'webp', 'bmp', 'gif']);
  });
});
