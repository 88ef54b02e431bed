import { afterAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { fixtureImage, removeTestMediaCache, runFfmpeg, writeTestFile } from '../../../test/support/media.js';
import { decodeFrame, FrameRejection } from './decode-frame.js';

afterAll(removeTestMediaCache);

/**
 * The frame contract accepts JPEG, PNG and WebP only: a real BMP (which dataprep decodes with ffmpeg) or GIF frame is
 * refused by its bytes with the format reason, never handed to a decoder that would fail in its own way.
 */
describe('decodeFrame refuses the image formats the frame contract does not accept', () => {
  it('a real 24-bit BMP and a GIF get the format reason', async () => {
    const png = await sharp(fixtureImage('coffee.png')).resize(64, 48).png().toBuffer();
    const source = await writeTestFile('frame-source.png', png);
    const bmpFile = source.replace(/\.png$/, '.bmp');
    await runFfmpeg(['-i', source, '-frames:v', '1', '-c:v', 'bmp', '-pix_fmt', 'bgr24', bmpFile]);
    const bmp = await readFile(bmpFile);
    const gif = await sharp(png).gif().toBuffer();
    expect(await decodeFrame(bmp, 1_000_000, 256)).toEqual({ ok: false, reason: FrameRejection.format });
    expect(await decodeFrame(gif, 1_000_000, 256)).toEqual({ ok: false, reason: FrameRejection.format });
    expect(await decodeFrame(png, 1_000_000, 256)).toMatchObject({ ok: true });
  });
});
