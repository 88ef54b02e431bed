/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import ort from 'onnxruntime-node';
import sharp from 'sharp';
import { ensureDefaultModels } from '../../../../test/support/models.js';
import { readManifest } from '../manifest.js';
import { loadDefaultReference, maxAbsDiff, runReference, type tf } from './tfjs-reference.js';
import { FIXTURE_IMAGES_DIR } from '../../../../test/support/fixtures.js';

const fixtures = FIXTURE_IMAGES_DIR;
const name = 'mobilenet-v2-1.4-feature-vector';

async function pixels(file: string, flip: boolean): Promise<Float32Array> {
  const image = sharp(path.join(fixtures, file)).resize(224, 224, { fit: 'fill' }).removeAlpha();
  const data = await (flip ? image.flop() : image).raw().toBuffer();
  return Float32Array.from(data, (v) => v / 255);
}

describe('imported MobileNetV2 feature vector', () => {
  let session: ort.InferenceSession;
  let reference: tf.GraphModel;
  let outputTfName: string;
  let batch: Float32Array;
  const files = ['astronaut.png', 'chelsea.png', 'coffee.png', 'rocket.jpg'];

  beforeAll(async () => {
    const dir = path.join(await ensureDefaultModels(), name);
    const { modelPath } = await readManifest(dir);
    session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 2 });
    const loaded = await loadDefaultReference(name);
    reference = loaded.model;
    outputTfName = loaded.definition.outputs[0].tfName;
    const images = await Promise.all([...files.map((f) => pixels(f, false)), ...files.map((f) => pixels(f, true))]);
    batch = new Float32Array(images.length * 224 * 224 * 3);
    images.forEach((img, i) => batch.set(img, i * img.length));
  });

  it('has a manifest the runtime accepts, with a dynamic batch', async () => {
    const { manifest } = await readManifest(path.join(await ensureDefaultModels(), name));
    expect(manifest).toMatchObject({ role: 'image-embedder', dimension: 1792, normalize: true, format: 'embedding' });
    expect(manifest.image).toMatchObject({ name: 'images', width: 224, height: 224, maxBatch: 32, dtype: 'float32' });
    expect(manifest.source).toBe('nsfwjs@4.3.0/dist/models/mobilenet_v2_mid/model.min.js');
  });

  it('matches the TFJS graph on a batch of 8 real photos', async () => {
    const out = await session.run({ images: new ort.Tensor('float32', batch, [8, 224, 224, 3]) });
    const embedding = out.embedding;
    expect(embedding.dims).toEqual([8, 1792]);
    const [expected] = await runReference(
      reference,
      { input: { data: batch, shape: [8, 224, 224, 3], dtype: 'float32' } },
      [outputTfName],
    );
    const got = embedding.data as Float32Array;
    expect(maxAbsDiff(got, expected)).toBeLessThan(1e-4);
    // The features carry signal: different photos give clearly different vectors.
    expect(maxAbsDiff(got.subarray(0, 1792), got.subarray(1792, 3584))).toBeGreaterThan(0.5);
  });
});
