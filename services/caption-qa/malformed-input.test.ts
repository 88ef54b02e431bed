import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { malformedSweep } from '../../test/support/malformed-sweep.js';
import { realEmbedders, serveQa, type QaModels, type ServedQa } from './testing/serve-app.js';
import { CAPTION_QA_SWEEP, isDetailBody } from './testing/sweep-endpoints.js';

let models: QaModels;
let qa: ServedQa;

beforeAll(async () => {
  models = await realEmbedders();
  qa = await serveQa(models);
}, 120_000);

afterAll(async () => {
  await qa.close();
  await models.release();
});

describe('caption-qa against malformed input', () => {
  it('answers every malformed request 4xx in {detail}, never 500, never a stack trace', async () => {
    const report = await malformedSweep({
      base: qa.api,
      endpoints: CAPTION_QA_SWEEP,
      errorShape: isDetailBody,
      health: [`${qa.api}/health`],
    });
    expect(report.failures).toEqual([]);
    expect(report.cases).toBeGreaterThan(50);
  }, 120_000);
});
