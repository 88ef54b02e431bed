/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import path from 'node:path';
import sharp from 'sharp';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { decodeImage } from '../media/image-decode.js';
import { cropDetection } from './crop.js';
import { cosine } from './l2-normalize.js';
import { loadModels, type LoadedModels } from './model-registry.js';
import type { RgbImage } from './roles.js';
import { FIXTURE_IMAGES_DIR, FIXTURE_PHOTOS } from '../../../test/support/fixtures.js';

const FIXTURES = FIXTURE_IMAGES_DIR;
const PHOTOS = FIXTURE_PHOTOS;

function norm(vector: Float32Array): number {
  return Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
}

function topMatch(query: Float32Array, candidates: Float32Array[]): number {
  const scores = candidates.map((c) => cosine(query, c));
  return scores.indexOf(Math.max(...scores));
}

describe('default models on real photos', () => {
  let models: LoadedModels;
  const photos = new Map<string, RgbImage>();

  beforeAll(async () => {
    models = await loadModels({ modelsDir: await ensureDefaultModels(), provider: 'cpu', threads: 2 });
    for (const name of PHOTOS) photos.set(name, await decodeImage(path.join(FIXTURES, name)));
  });

  afterAll(async () => {
    await models?.release();
  });

  it('reports the default model names on cpu', () => {
    expect(models.status().map((s) => `${s.role}:${s.name}:${s.device}`)).toEqual([
      'image-embedder:mobilenet-v2-1.4-feature-vector:cpu',
      'text-embedder:universal-sentence-encoder-lite:cpu',
      'detector:centernet-mobilenetv3-coco:cpu',
      'pose-estimator:movenet-lightning:cpu',
    ]);
  });

  it('detects the bus and people on the bus photo, in source pixels, without same-class duplicates', async () => {
    const image = photos.get('pexels_double_decker_bus.jpg')!;
    const detections = await models.detector.detect(image, 0.3);
    const labels = detections.map((d) => d.label);
    expect(labels).toContain('bus');
    expect(labels).toContain('person');
    const bus = detections.find((d) => d.label === 'bus')!;
    expect(bus.score).toBeGreaterThan(0.6);
    // The bus fills most of the frame: its box must be large and within the 546×413 image.
    expect(bus.box[2] - bus.box[0]).toBeGreaterThan(image.width * 0.5);
    expect(bus.box[3] - bus.box[1]).toBeGreaterThan(image.height * 0.4);
    for (const d of detections) {
      expect(d.score).toBeGreaterThanOrEqual(0.3);
      expect(d.box[0]).toBeGreaterThanOrEqual(0);
      expect(d.box[2]).toBeLessThanOrEqual(image.width);
      expect(d.box[3]).toBeLessThanOrEqual(image.height);
    }
    expect(detections.filter((d) => d.label === 'bus')).toHaveLength(1);
  });

  it('keeps the event loop running while a worker-hosted detector runs, with the same detections', async () => {
    const image = photos.get('pexels_double_decker_bus.jpg')!;
    const isolated = await loadModels({
      modelsDir: await ensureDefaultModels(),
      provider: 'cpu',
      threads: 2,
      isolation: 'worker',
    });
    try {
      await isolated.detector.detect(image, 0.3); // session start-up is not what is measured
      let ticks = 0;
      let running = true;
      const tick = () => {
        if (!running) return;
        ticks++;
        setImmediate(tick);
      };
      setImmediate(tick);
      const fromWorker = await isolated.detector.detect(image, 0.3);
      running = false;
      // In-process, onnxruntime-node runs on this thread and no callback could run until the detection finished.
      expect(ticks).toBeGreaterThan(10);
      expect(fromWorker).toEqual(await models.detector.detect(image, 0.3));
    } finally {
      await isolated.release();
    }
  });

  it('finds plausible upper-body keypoints on the astronaut and none on the cat', async () => {
    const image = photos.get('astronaut.png')!;
    const keypoints = await models.poseEstimator.estimate(image);
    expect(keypoints.map((k) => k.name).slice(0, 7)).toEqual([
      'nose',
      'left_eye',
      'right_eye',
      'left_ear',
      'right_ear',
      'left_shoulder',
      'right_shoulder',
    ]);
    expect(keypoints).toHaveLength(17);
    const byName = Object.fromEntries(keypoints.map((k) => [k.name, k]));
    for (const name of ['nose', 'left_eye', 'right_eye', 'left_shoulder', 'right_shoulder']) {
      const k = byName[name];
      expect([name, k.score > 0.3]).toEqual([name, true]);
      expect(k.x).toBeGreaterThan(0);
      expect(k.x).toBeLessThan(image.width);
      expect(k.y).toBeGreaterThan(0);
      expect(k.y).toBeLessThan(image.height);
    }
    expect(byName.nose.y).toBeLessThan(byName.left_shoulder.y);
    expect(byName.nose.y).toBeLessThan(byName.right_shoulder.y);
    // Facing the camera: the person's left shoulder is on the image's right.
    expect(byName.left_shoulder.x).toBeGreaterThan(byName.right_shoulder.x);
    // Mapped back at full scale (not the 192-px model input): shoulders span a good part of the 512-px photo and
    // the nose lies inside the detector's person box.
    expect(byName.left_shoulder.x - byName.right_shoulder.x).toBeGreaterThan(image.width * 0.25);
    const person = (await models.detector.detect(image, 0.3)).find((d) => d.label === 'person')!;
    expect(byName.nose.x).toBeGreaterThan(person.box[0]);
    expect(byName.nose.x).toBeLessThan(person.box[2]);
    expect(byName.nose.y).toBeGreaterThan(person.box[1]);
    expect(byName.nose.y).toBeLessThan((person.box[1] + person.box[3]) / 2);

    const cat = await models.poseEstimator.estimate(photos.get('chelsea.png')!);
    expect(cat.filter((k) => k.score > 0.3)).toEqual([]);
  });

  it('retrieves the original photo for a flipped, cropped copy and for a detected object crop', async () => {
    const originals = await models.imageEmbedder.embed(PHOTOS.map((name) => photos.get(name)!));
    expect(originals).toHaveLength(PHOTOS.length);
    for (const v of originals) {
      expect(v).toHaveLength(1792);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    for (const name of ['pexels_double_decker_bus.jpg', 'motorcycle_left.png']) {
      const { width, height } = photos.get(name)!;
      const edited = await sharp(path.join(FIXTURES, name))
        .flop()
        .extract({
          left: Math.round(width * 0.1),
          top: Math.round(height * 0.1),
          width: Math.round(width * 0.8),
          height: Math.round(height * 0.8),
        })
        .png()
        .toBuffer();
      const [query] = await models.imageEmbedder.embed([await decodeImage(edited)]);
      expect([name, PHOTOS[topMatch(query, originals)]]).toEqual([name, name]);
    }
    const busPhoto = photos.get('pexels_double_decker_bus.jpg')!;
    const bus = (await models.detector.detect(busPhoto, 0.5)).find((d) => d.label === 'bus')!;
    const [crop] = await models.imageEmbedder.embed([cropDetection(busPhoto, bus)]);
    expect(PHOTOS[topMatch(crop, originals)]).toBe('pexels_double_decker_bus.jpg');
  });

  it('matches a text query to the right caption, with normalised vectors and stable batching', async () => {
    const captions = [
      'an astronaut in a white space suit',
      'a cat lying on a blanket',
      'a cup of coffee on a saucer',
      'a red bus driving down a city road',
      'a motorcycle parked in a garage',
      'a rocket on its launch pad',
    ];
    const [query] = await models.textEmbedder.embed(['a double decker bus on the street']);
    const vectors = await models.textEmbedder.embed(captions);
    expect(query).toHaveLength(512);
    for (const v of [query, ...vectors]) expect(norm(v)).toBeCloseTo(1, 5);
    expect(captions[topMatch(query, vectors)]).toBe('a red bus driving down a city road');

    // An empty text keeps its row: the texts after it still get their own vectors.
    const [, empty, rocket] = await models.textEmbedder.embed(['a cat', '', 'a rocket on its launch pad']);
    expect(norm(empty)).toBeCloseTo(1, 5);
    expect(cosine(rocket, vectors[5])).toBeCloseTo(1, 5);
  });
});
