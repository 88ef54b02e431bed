import type { SweepEndpoint } from '../../../test/support/malformed-sweep.js';
import { isCaptionRunsErrorBody } from '../errors.js';

/** The service's error body: `{detail: {message}}`, or `{detail: [{loc, msg, type}]}` for a 422. */
export const isRunsErrorBody = (body: unknown) => isCaptionRunsErrorBody(body);

/** Every endpoint, with base bodies refused at validation (the sweep starts no run). */
export const CAPTION_RUNS_SWEEP: SweepEndpoint[] = [
  {
    method: 'POST',
    path: '/generate_captions_alerts',
    allow: ['GET', 'HEAD', 'POST'],
    // Refused twice over (no host, a negative frame rate), so that no single mutation makes it valid.
    body: { json: { rtspUrl: 'rtsp://', frameRate: -1, runName: 'sweep' } },
  },
  {
    method: 'GET',
    path: '/generate_captions_alerts/:run_id',
    params: { run_id: 'no-such-run' },
    allow: ['DELETE', 'GET', 'HEAD'],
  },
  {
    method: 'DELETE',
    path: '/generate_captions_alerts/:run_id',
    params: { run_id: 'no-such-run' },
    allow: ['DELETE', 'GET', 'HEAD'],
  },
  { method: 'GET', path: '/vlm-models', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/detection-models', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/pipelines', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/health', allow: ['GET', 'HEAD'] },
  // A GET without an upgrade is 426; the stream (metadata-stream) is not swept: it never ends by itself.
  { method: 'GET', path: '/ws/metrics', allow: ['GET', 'HEAD'] },
];
