import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { malformedSweep } from '../../test/support/malformed-sweep.js';
import type { LoadedMultiPoseEstimator } from '../lib/inference/index.js';
import { realEstimator, serveApp, type ServedApp } from './testing/serve-app.js';
import { FRAME_ANALYSIS_SWEEP, isAnalysisErrorBody } from './testing/sweep-endpoints.js';

describe('frame-analysis against malformed input', () => {
  let estimator: LoadedMultiPoseEstimator;
  let served: ServedApp;

  beforeAll(async () => {
    estimator = await realEstimator();
    served = await serveApp({ estimator });
  });
  afterAll(async () => {
    await served?.close();
    await estimator?.release();
  });

  it('answers every malformed request 4xx in {detail: {error_code, message}}, never 500, never a stack trace', async () => {
    const report = await malformedSweep({
      base: served.api,
      endpoints: FRAME_ANALYSIS_SWEEP,
      errorShape: isAnalysisErrorBody,
      health: [`${served.api}/health`],
    });
    expect(report.failures).toEqual([]);
    expect(report.cases).toBeGreaterThan(10);
  });

  it('answers a wrong method 405 with Allow in its own shape (was text/plain)', async () => {
    const res = await fetch(`${served.api}/analyze/batch`, { method: 'GET' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toEqual({ detail: { error_code: 'METHOD_NOT_ALLOWED', message: 'Method Not Allowed' } });
  });
});
