import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { malformedSweep } from '../../test/support/malformed-sweep.js';
import { serveRuns, type ServedRuns } from './testing/serve-app.js';
import { CAPTION_RUNS_SWEEP, isRunsErrorBody } from './testing/sweep-endpoints.js';

let runs: ServedRuns;

beforeAll(async () => {
  runs = await serveRuns();
}, 120_000);

afterAll(async () => {
  await runs.close();
});

describe('caption-runs against malformed input', () => {
  it('answers every malformed request 4xx in {detail}, never 500, never a stack trace, and starts no run', async () => {
    const report = await malformedSweep({
      base: runs.api,
      endpoints: CAPTION_RUNS_SWEEP,
      errorShape: isRunsErrorBody,
      health: [`${runs.api}/health`],
    });
    expect(report.failures).toEqual([]);
    expect(report.cases).toBeGreaterThan(40);
    expect(await runs.plane.controlPlane.resources.list('CaptionRun')).toEqual([]);
  }, 120_000);
});
