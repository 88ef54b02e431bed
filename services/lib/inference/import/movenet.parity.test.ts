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

const name = 'movenet-lightning';
const photo = fixtureImage('astronaut.png');

describe('imported MoveNet Lightning', () => {
  let manifest: ModelManifest;
  let got: Float32Array;
  let expected: Float32Array;

  beforeAll(async () => {
    const dir = path.join(await ensureDefaultModels(), name);
    const read = await readManifest(dir);
    manifest = read.manifest;
    const data = await sharp(photo).resize(192, 192, { fit: 'fill' }).removeAlpha().raw().toBuffer();
    const input = Int32Array.from(data);
    const session = await ort.InferenceSession.create(read.modelPath, { intraOpNumThreads: 2 });
    const out = await session.run({ input: new ort.Tensor('int32', input, [1, 192, 192, 3]) });
    expect(out.keypoints.dims).toEqual([1, 1, 17, 3]);
    got = out.keypoints.data as Float32Array;
    const { model, definition } = await loadDefaultReference(name);
    [expected] = await runReference(
      model,
      { [definition.inputs[0].tfName]: { data: input, shape: [1, 192, 192, 3], dtype: 'int32' } },
      [definition.outputs[0].tfName],
    );
  });

  it('has a pose manifest with an int32 letterboxed input', () => {
    expect(manifest).toMatchObject({ role: 'pose-estimator', format: 'movenet', outputs: { keypoints: 'keypoints' } });
    expect(manifest.image).toMatchObject({ width: 192, height: 192, resize: 'letterbox', dtype: 'int32', maxBatch: 1 });
  });

  it('matches the TFJS graph on a real photo', () => {
    expect(maxAbsDiff(got, expected)).toBeLessThan(1e-4);
  });

  it('finds the person: keypoints inside the frame, nose scored with confidence', () => {
    for (let k = 0; k < 17; k++) {
      expect(got[k * 3]).toBeGreaterThanOrEqual(0);
      expect(got[k * 3]).toBeLessThanOrEqual(1);
    }
    expect(got[2]).toBeGreaterThan(0.3);
  });
});
