import type { SweepEndpoint } from '../../../test/support/malformed-sweep.js';

/** The first bytes of an MP4 (an `ftyp` box), so that the upload is judged a video until its size. */
export const MP4_HEAD = Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex');

/** The contract's error body, `{status: 'error', message}`, and nothing else. */
export const isStatusMessageBody = (body: unknown) =>
  typeof body === 'object' &&
  body !== null &&
  (body as { status?: unknown }).status === 'error' &&
  typeof (body as { message?: unknown }).message === 'string' &&
  Object.keys(body).length === 2;

/**
 * Files whose first bytes pass the upload routes' type checks, so that a body cut inside them is cut while the route
 * stores it (the cut always comes before the part ends: nothing is decoded, no model runs).
 */
const PNG_START = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(256 * 1024, 7)]);
const MP4_START = Buffer.concat([MP4_HEAD, Buffer.alloc(256 * 1024, 7)]);

/** Every endpoint, with base bodies refused at validation (the sweep never decodes media or runs a model). */
export const DATAPREP_SWEEP: SweepEndpoint[] = [
  {
    method: 'POST',
    path: '/summary',
    allow: ['POST'],
    body: {
      json: {
        bucket_name: 'sweep',
        video_id: 'v1',
        video_summary: 'a summary',
        video_start_time: 5,
        video_end_time: 1,
      },
    },
  },
  {
    method: 'POST',
    path: '/media/process',
    allow: ['POST'],
    body: { json: { bucket_name: 'sweep', video_id: 'v1', detection_confidence: 7 } },
  },
  {
    method: 'POST',
    path: '/media/ingest',
    allow: ['POST'],
    body: { json: { type: 'image_base64', image_base64: 'aGk=', detection_confidence: 7 } },
  },
  {
    method: 'POST',
    path: '/media/process/batch',
    allow: ['POST'],
    body: { json: { items: [{ video_id: 'v1' }], bucket_name: 'sweep', detection_confidence: 7 } },
  },
  {
    method: 'POST',
    path: '/media/ingest/batch',
    allow: ['POST'],
    body: { json: { images: [], bucket_name: 'sweep', detection_confidence: 7 } },
  },
  {
    method: 'POST',
    path: '/media/ingest-dir',
    allow: ['POST'],
    body: { json: { dir_path: 'sweep', detection_confidence: 7 } },
  },
  { method: 'POST', path: '/search', allow: ['POST'], body: { json: { query: 'a person', top_k: 0 } } },
  {
    method: 'POST',
    path: '/media/upload',
    allow: ['POST'],
    body: { multipart: { fileField: 'file', file: { name: 'photo.png', bytes: PNG_START } } },
  },
  {
    method: 'POST',
    path: '/media/upload/batch',
    allow: ['POST'],
    body: { multipart: { fileField: 'files', file: { name: 'clip.mp4', bytes: MP4_START } } },
  },
  { method: 'GET', path: '/media', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/media/download', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/media/frame', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/health', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/telemetry', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/media/jobs/:job_id', params: { job_id: 'job-missing' }, allow: ['GET', 'HEAD', 'DELETE'] },
  { method: 'DELETE', path: '/media/:bucket_name', params: { bucket_name: 'sweep-missing' }, allow: ['DELETE'] },
  {
    method: 'DELETE',
    path: '/media/:bucket_name/:video_id',
    params: { bucket_name: 'sweep-missing', video_id: 'v1' },
    allow: ['DELETE'],
  },
];
