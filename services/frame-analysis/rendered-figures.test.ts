/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LoadedMultiPoseEstimator } from '../lib/inference/index.js';
import { analysisForm, realEstimator, serveApp, type ServedApp } from './testing/serve-app.js';
import { renderStickFigure, shifted, standing, withPoints, type Skeleton } from './testing/stick-figure.js';

/**
 * Figures drawn as SVG from known skeletons and rendered by sharp, through the real endpoint and the real pose model.
 * The model finds these figures with their keypoints within a few pixels for hanging, shelf-height and pocket-height
 * wrists; outstretched and raised wrists come out under the patterns' keypoint score, so quick_grab and raised_arms
 * are checked on the same skeletons' exact keypoints (patterns/shipped-patterns.test.ts) and the fall on real photos
 * (app.test.ts).
 */
let estimator: LoadedMultiPoseEstimator;
let served: ServedApp;

const base = standing(320, 465, 330);
const u = 330 / 8;
const [rsx, rsy] = base.right_shoulder;
const shelf = withPoints(base, {
  right_elbow: [rsx - 0.8 * u, rsy - 0.5 * u],
  right_wrist: [rsx - 0.5 * u, rsy - 1.7 * u],
});
const pocket = withPoints(base, {
  right_elbow: [rsx - 0.3 * u, rsy + 1.6 * u],
  right_wrist: [rsx + 0.4 * u, rsy + 2.8 * u],
});

async function analyse(patternId: string, skeletons: Skeleton[], timestamps?: string) {
  const frames = await Promise.all(skeletons.map((s) => renderStickFigure(s)));
  const fields = { entity_id: 'figure', pattern_id: patternId, ...(timestamps ? { timestamps_ms: timestamps } : {}) };
  const response = await fetch(`${served.api}/analyze/batch`, { method: 'POST', body: analysisForm(fields, frames) });
  expect(response.status).toBe(200);
  return response.json();
}

beforeAll(async () => {
  estimator = await realEstimator();
  served = await serveApp({ estimator });
}, 120_000);

afterAll(async () => {
  await served.close();
  await estimator.release();
});

describe('rendered figures through the endpoint', () => {
  it('shelf_to_waist: a wrist from shelf height to the pocket matches; one that never left the waist does not', async () => {
    expect(await analyse('shelf_to_waist', [shelf, pocket, pocket])).toMatchObject({
      status: 'suspicious',
      pose_detected: true,
      confidence: 1,
    });
    expect(await analyse('shelf_to_waist', [base, pocket, pocket])).toMatchObject({
      status: 'no_match',
      confidence: 0,
    });
  });

  it('loitering: standing still for 45 s matches; walking away over 40 s does not', async () => {
    const still = await analyse(
      'loitering',
      [base, shifted(base, 6, 0), shifted(base, -5, 0), base],
      '0,15000,30000,45000',
    );
    expect(still.status).toBe('suspicious');
    expect(still.confidence).toBeGreaterThanOrEqual(0.7);
    const walking = await analyse('loitering', [base, shifted(base, 100, 0), shifted(base, 200, 0)], '0,20000,40000');
    expect(walking).toMatchObject({ status: 'no_match', confidence: 0 });
  });
});
