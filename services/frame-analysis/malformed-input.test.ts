import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { malformedSweep, type SweepEndpoint } from '../../test/support/malformed-sweep.js';
import type { LoadedMultiPoseEstimator } from '../lib/inference/index.js';
import { realEstimator, serveApp, type ServedApp } from './testing/serve-app.js';

/** The service's error body: `{detail: {error_code, message, invalid_frames?}}`. */
const isAnalysisErrorBody = (body: unknown) => {
  const detail = (body as { detail?: Record<string, unknown> } | null)?.detail;
  return (
    typeof detail === 'object' &&
    detail !== null &&
    Object.keys(body as object).length === 1 &&
    typeof detail.error_code === 'string' &&
    typeof detail.message === 'string'
  );
};

/** Every endpoint; no case carries a decodable frame, so the pose model never runs. */
const ENDPOINTS: SweepEndpoint[] = [
  {
    method: 'POST',
    path: '/analyze/batch',
    allow: ['POST'],
    body: { multipart: { fileField: 'frames', fields: { entity_id: 'sweep' } } },
  },
  { method: 'GET', path: '/health', allow: ['GET', 'HEAD'] },
];

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
    const report = await malformedSweep({ base: served.api, endpoints: ENDPOINTS, errorShape: isAnalysisErrorBody });
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
