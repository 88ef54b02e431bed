import type { SweepEndpoint } from '../../../test/support/malformed-sweep.js';

/** The contract's error body: exactly `{detail: <string>}`. */
export const isDetailBody = (body: unknown) =>
  typeof body === 'object' &&
  body !== null &&
  typeof (body as { detail?: unknown }).detail === 'string' &&
  Object.keys(body).length === 1;

/** Every endpoint, with base bodies refused at validation (the sweep stores nothing and asks no model). */
export const CAPTION_QA_SWEEP: SweepEndpoint[] = [
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
