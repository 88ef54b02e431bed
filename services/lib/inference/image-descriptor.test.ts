import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { FIXTURE_PHOTOS, fixtureImage } from '../../../test/support/fixtures.js';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { decodeImage } from '../media/image-decode.js';
import { imageDescriptor, lowPass } from './image-descriptor.js';
import { cosine } from './l2-normalize.js';
import { loadModels, type LoadedModels } from './model-registry.js';
import type { ImageEmbedder, RgbImage } from './roles.js';

/** A 40×20 image whose left half is black and right half white. */
const halves: RgbImage = {
  width: 40,
  height: 20,
  data: new Uint8Array(40 * 20 * 3).map((_, i) => (Math.floor(i / 3) % 40 < 20 ? 0 : 255)),
};

describe('lowPass', () => {
  it('brings the image to the size the model input takes it, per resize mode', async () => {
    expect(await lowPass(halves, { width: 8, height: 8, resize: 'stretch' })).toMatchObject({ width: 8, height: 8 });
    expect(await lowPass(halves, { width: 8, height: 8, resize: 'letterbox' })).toMatchObject({ width: 8, height: 4 });
    expect(await lowPass(halves, { width: 8, height: 8, resize: 'center-crop' })).toMatchObject({
      width: 16,
      height: 8,
    });
  });

  it('blurs: the hard edge between the halves becomes a ramp', async () => {
    const out = await lowPass(halves, { width: 16, height: 16, resize: 'stretch' });
    const row = Array.from({ length: 16 }, (_, x) => out.data[(8 * 16 + x) * 3]);
    expect(row[0]).toBe(0);
    expect(row[15]).toBe(255);
    expect(row.filter((v) => v > 0 && v < 255).length).toBeGreaterThanOrEqual(2);
  });
});

describe('imageDescriptor', () => {
  const seen: RgbImage[] = [];
  const recording: ImageEmbedder = {
    info: { name: 'recording', device: 'cpu' },
    dimension: 1,
    input: { width: 16, height: 16, resize: 'stretch' },
    embed: async (images) => {
      seen.push(...images);
      return images.map(() => Float32Array.of(1));
    },
  };

  it('global-v1 hands the images to the embedder unchanged; lowpass-v2 hands them at the input size', async () => {
    seen.length = 0;
    await imageDescriptor(recording, 'global-v1').embed([halves]);
    await imageDescriptor(recording, 'lowpass-v2').embed([halves]);
    expect(seen[0]).toBe(halves);
    expect(seen[1]).toMatchObject({ width: 16, height: 16 });
    expect(imageDescriptor(recording, 'lowpass-v2')).toMatchObject({ descriptor: 'lowpass-v2', dimension: 1 });
  });
});

describe('lowpass-v2 with the default image embedder', () => {
  let models: LoadedModels<'imageEmbedder'>;

  beforeAll(async () => {
    models = await loadModels({
      modelsDir: await ensureDefaultModels(),
      provider: 'cpu',
      threads: 2,
      roles: ['imageEmbedder'],
    });
  });
  afterAll(() => models?.release());

  /** A copy cropped to its central 80 %, mirrored, blurred σ 1.5 and scaled to 70 %, as the phone copy. */
  const phoneCopy = async (photo: string) => {
    const { width, height } = await sharp(fixtureImage(photo)).metadata();
    const w = Math.round(width! * 0.8);
    const h = Math.round(height! * 0.8);
    const edited = await sharp(fixtureImage(photo))
      .extract({ left: Math.round((width! - w) / 2), top: Math.round((height! - h) / 2), width: w, height: h })
      .flop()
      .blur(1.5)
      .png()
      .toBuffer();
    return decodeImage(
      await sharp(edited)
        .resize(Math.round(w * 0.7))
        .jpeg({ quality: 90 })
        .toBuffer(),
    );
  };

  it('brings a mirrored, cropped, blurred and scaled copy closer to its original than global-v1 does', async () => {
    const gains: number[] = [];
    for (const photo of FIXTURE_PHOTOS) {
      const original = await decodeImage(fixtureImage(photo));
      const copy = await phoneCopy(photo);
      const similarity = async (name: 'global-v1' | 'lowpass-v2') => {
        const [a, b] = await imageDescriptor(models.imageEmbedder, name).embed([original, copy]);
        return cosine(a, b);
      };
      gains.push((await similarity('lowpass-v2')) - (await similarity('global-v1')));
    }
    expect(gains.filter((gain) => gain > 0).length).toBeGreaterThanOrEqual(FIXTURE_PHOTOS.length - 1);
  });

  it('finds the original of every fixture photo first from its mirrored phone copy', async () => {
    const descriptor = imageDescriptor(models.imageEmbedder, 'lowpass-v2');
    const originals = await descriptor.embed(
      await Promise.all(FIXTURE_PHOTOS.map((photo) => decodeImage(fixtureImage(photo)))),
    );
    for (const photo of FIXTURE_PHOTOS) {
      const [query] = await descriptor.embed([await phoneCopy(photo)]);
      const scores = originals.map((original) => cosine(query, original));
      expect(FIXTURE_PHOTOS[scores.indexOf(Math.max(...scores))]).toBe(photo);
    }
  });
});
