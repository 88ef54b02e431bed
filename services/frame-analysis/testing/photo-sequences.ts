import sharp from 'sharp';
import { fixtureImage } from '../../../test/support/fixtures.js';

/** The person in red in the fixture photo of several people walking (box in its pixels, with a margin). */
const PERSON = { left: 313, top: 157, width: 82, height: 199 };
const CANVAS = { width: 640, height: 480, background: '#8a8a8a' };

/** The person cut out of the photo, 360 px tall. */
async function person(): Promise<Buffer> {
  return sharp(fixtureImage('person_multi_det.jpg')).extract(PERSON).resize({ height: 360 }).toBuffer();
}

/** One JPEG frame: `image` rotated by `degrees` and placed on a plain canvas at (`left`, `top`), or bottom-aligned. */
async function frame(image: Buffer, degrees: number, left: number, top: number | 'bottom'): Promise<Buffer> {
  const turned = await sharp(image).rotate(degrees, { background: CANVAS.background }).toBuffer({
    resolveWithObject: true,
  });
  const y = top === 'bottom' ? CANVAS.height - turned.info.height - 10 : top;
  return sharp({ create: { ...CANVAS, channels: 3 } })
    .composite([{ input: turned.data, left, top: Math.max(0, y) }])
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** A real person standing, then lying on the floor (turned by 270°, dropped to the bottom): a fall. */
export async function fallSequence(): Promise<Buffer[]> {
  const image = await person();
  return [await frame(image, 0, 280, 10), await frame(image, 0, 284, 12), await frame(image, 270, 140, 'bottom')];
}

/** The same person upright in every frame, moving a little to the side: walking, no fall. */
export async function walkSequence(): Promise<Buffer[]> {
  const image = await person();
  return Promise.all([0, 20, 40].map((dx) => frame(image, 0, 260 + dx, 10)));
}
