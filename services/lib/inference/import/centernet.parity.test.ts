/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import ort from 'onnxruntime-node';
import sharp from 'sharp';
import { ensureDefaultModels } from '../../../../test/support/models.js';
import { readManifest, type ModelManifest } from '../manifest.js';
import { loadDefaultReference, maxAbsDiff, runReference } from './tfjs-reference.js';
import { fixtureImage } from '../../../../test/support/fixtures.js';

const name = 'centernet-mobilenetv3-coco';
const photo = fixtureImage('person_multi_det.jpg');

describe('imported CenterNet detector', () => {
  let manifest: ModelManifest;
  let got: Float32Array;
  let expected: Float32Array;

  beforeAll(async () => {
    const dir = path.join(await ensureDefaultModels(), name);
    const read = await readManifest(dir);
    manifest = read.manifest;
    const data = await sharp(photo).resize(512, 512, { fit: 'fill' }).removeAlpha().raw().toBuffer();
    const input = Float32Array.from(data);
    const session = await ort.InferenceSession.create(read.modelPath, { intraOpNumThreads: 2 });
    const out = await session.run({ images: new ort.Tensor('float32', input, [1, 512, 512, 3]) });
    expect(out.detections.dims).toEqual([1, 100, 6]);
    got = out.detections.data as Float32Array;
    const { model, definition } = await loadDefaultReference(name);
    [expected] = await runReference(
      model,
      { [definition.inputs[0].tfName]: { data: input, shape: [1, 512, 512, 3], dtype: 'float32' } },
      [definition.outputs[0].tfName],
    );
  });

  it('has a manifest with the 80 COCO labels in human order', () => {
    expect(manifest).toMatchObject({
      role: 'detector',
      format: 'xyxy-score-class',
      outputs: { detections: 'detections' },
    });
    expect(manifest.labels).toHaveLength(80);
    expect(manifest.labels?.slice(0, 3)).toEqual(['person', 'bicycle', 'car']);
    expect(manifest.labels?.[79]).toBe('toothbrush');
    expect(manifest.license).toBe('MIT');
  });

  it('matches the TFJS graph on a real photo (boxes in input pixels, scores, classes)', () => {
    // Box coordinates reach ~512: float32 rounding in a different op order gives ~1e-4 absolute differences.
    expect(maxAbsDiff(got, expected)).toBeLessThan(2e-3);
  });

  it('finds a confident person in a photo of people', () => {
    const rows = Array.from({ length: 100 }, (_, i) => got.subarray(i * 6, i * 6 + 6));
    const best = rows[0];
    expect(best[4]).toBeGreaterThan(0.3);
    expect(manifest.labels?.[Math.round(best[5])]).toBe('person');
    expect(best[2]).toBeGreaterThan(best[0]);
    expect(best[3]).toBeGreaterThan(best[1]);
  });
});
