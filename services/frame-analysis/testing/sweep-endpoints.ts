import type { SweepEndpoint } from '../../../test/support/malformed-sweep.js';

/** The service's error body: `{detail: {error_code, message, invalid_frames?}}`. */
export const isAnalysisErrorBody = (body: unknown) => {
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
export const FRAME_ANALYSIS_SWEEP: SweepEndpoint[] = [
  {
    method: 'POST',
    path: '/analyze/batch',
    allow: ['POST'],
    body: { multipart: { fileField: 'frames', fields: { entity_id: 'sweep' } } },
  },
  { method: 'GET', path: '/health', allow: ['GET', 'HEAD'] },
];
