import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { malformedSweep, type SweepEndpoint } from '../../test/support/malformed-sweep.js';
import { realEmbedders, serveQa, type QaModels, type ServedQa } from './testing/serve-app.js';

/** The contract's error body: exactly `{detail: <string>}`. */
const isDetailBody = (body: unknown) =>
  typeof body === 'object' &&
  body !== null &&
  typeof (body as { detail?: unknown }).detail === 'string' &&
  Object.keys(body).length === 1;

/** Every endpoint, with base bodies refused at validation (the sweep stores nothing and asks no model). */
const ENDPOINTS: SweepEndpoint[] = [
  {
    method: 'POST',
    path: '/embeddings',
    allow: ['POST'],
    // Refused for its metadata (no caption text), so that no mutation of image_data makes it valid.
    body: { json: { image_data: 'a frame', metadata: { timestamp: 1 } } },
  },
  { method: 'POST', path: '/chat', allow: ['POST'], body: { json: { input: '' } } },
  {
    method: 'GET',
    path: '/frames/:id',
    params: { id: '01890000-0000-7000-8000-000000000000' },
    allow: ['GET', 'HEAD'],
  },
  { method: 'GET', path: '/health', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/model', allow: ['GET', 'HEAD'] },
];

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
    const report = await malformedSweep({ base: qa.api, endpoints: ENDPOINTS, errorShape: isDetailBody });
    expect(report.failures).toEqual([]);
    expect(report.cases).toBeGreaterThan(50);
  }, 120_000);
});
