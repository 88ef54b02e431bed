import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { malformedSweep } from '../../test/support/malformed-sweep.js';
import { serveCameraRules, type ServedCameraRules } from './testing/serve-app.js';
import { CAMERA_RULES_SWEEP, isHttpValidationBody } from './testing/sweep-endpoints.js';

let served: ServedCameraRules;

beforeAll(async () => {
  served = await serveCameraRules();
});

afterAll(async () => {
  await served?.close();
});

describe('camera-rules against malformed input', () => {
  it('answers every malformed request 4xx in the contract shape, never 500, never a stack trace', async () => {
    const report = await malformedSweep({
      base: served.url,
      endpoints: CAMERA_RULES_SWEEP,
      errorShape: isHttpValidationBody,
      health: [`${served.url}/health`],
    });
    expect(report.failures).toEqual([]);
    expect(report.cases).toBeGreaterThan(3);
  }, 120_000);
});
