import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { FIXTURE_PHOTOS, fixtureImage } from '../../../test/support/fixtures.js';
import { runFfmpeg } from '../../../test/support/media.js';

/** A changed copy of a fixture photo: what image→image search must still match to its original. */
export interface PhotoVariation {
  photo: string;
  change: 'crop' | 'flip' | 'blur' | 'brightness' | 'scale';
  /** JPEG (quality 90): small enough for the test's ingest cap. */
  jpeg: Buffer;
}

/** The five sharp variations of one photo: central 80% crop, mirror, blur, 30% brighter, half size. */
export async function photoVariations(photo: string): Promise<PhotoVariation[]> {
  const source = await readFile(fixtureImage(photo));
  const { width, height } = await sharp(source).metadata();
  const w = width!;
  const h = height!;
  const made = {
    crop: sharp(source).extract({
      left: Math.round(w * 0.1),
      top: Math.round(h * 0.1),
      width: Math.round(w * 0.8),
      height: Math.round(h * 0.8),
    }),
    flip: sharp(source).flop(),
    blur: sharp(source).blur(3),
    brightness: sharp(source).modulate({ brightness: 1.3 }),
    scale: sharp(source).resize(Math.round(w / 2)),
  };
  return Promise.all(
    Object.entries(made).map(async ([change, image]) => ({
      photo,
      change: change as PhotoVariation['change'],
      jpeg: await image.jpeg({ quality: 90 }).toBuffer(),
    })),
  );
}

/** Seconds each photo is shown in the slideshow. */
export const SLIDESHOW_SECONDS_PER_PHOTO = 2;
/** Frame rate of the slideshow. */
export const SLIDESHOW_FPS = 5;

/**
 * A 640×360 H.264 slideshow of `photos` (letterboxed, SLIDESHOW_SECONDS_PER_PHOTO each, SLIDESHOW_FPS) written
 * into `dir`; the photo shown at `t` seconds is `photos[floor(t / SLIDESHOW_SECONDS_PER_PHOTO)]`.
 */
export async function makeSlideshow(dir: string, photos: readonly string[] = FIXTURE_PHOTOS): Promise<string> {
  const frames = path.join(dir, 'slides');
  await mkdir(frames, { recursive: true });
  await Promise.all(
    photos.map((photo, i) =>
      sharp(fixtureImage(photo))
        .resize(640, 360, { fit: 'contain', background: { r: 0, g: 0, b: 0 } })
        .png()
        .toFile(path.join(frames, `slide${String(i).padStart(2, '0')}.png`)),
    ),
  );
  const file = path.join(dir, 'slideshow.mp4');
  await runFfmpeg([
    '-framerate',
    `1/${SLIDESHOW_SECONDS_PER_PHOTO}`,
    '-i',
    path.join(frames, 'slide%02d.png'),
    '-vf',
    `fps=${SLIDESHOW_FPS},format=yuv420p`,
    '-frames:v',
    String(photos.length * SLIDESHOW_SECONDS_PER_PHOTO * SLIDESHOW_FPS),
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '20',
    '-movflags',
    '+faststart',
    file,
  ]);
  return file;
}
