import type { SweepEndpoint } from '../../../test/support/malformed-sweep.js';

/** The contract's error bodies: HTTPValidationError `{detail: [{loc, msg, type}]}`, else `{detail: <string>}`. */
export const isHttpValidationBody = (body: unknown, status: number) => {
  if (typeof body !== 'object' || body === null || Object.keys(body).length !== 1) return false;
  const detail = (body as { detail?: unknown }).detail;
  if (typeof detail === 'string') return status !== 422;
  return (
    Array.isArray(detail) &&
    detail.length > 0 &&
    detail.every(
      (issue) =>
        Array.isArray(issue?.loc) &&
        ['body', 'query', 'path'].includes(issue.loc[0]) &&
        typeof issue.msg === 'string' &&
        typeof issue.type === 'string',
    )
  );
};

/** Every endpoint, with base bodies refused at validation (the sweep changes nothing). */
export const CAMERA_RULES_SWEEP: SweepEndpoint[] = [
  { method: 'GET', path: '/', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/health', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/cameras', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/events', allow: ['GET', 'HEAD'] },
  // Refused for its action, so that no mutation of another field makes it valid.
  {
    method: 'POST',
    path: '/rules/',
    allow: ['GET', 'HEAD', 'POST'],
    body: { json: { id: 'sweep-rule', label: 'person', action: 'teleport', camera: 'front_door' } },
  },
  // Refused for its value (not a boolean), so the sweep never asks dataprep nor writes a watcher.
  {
    method: 'POST',
    path: '/watchers/enable',
    allow: ['GET', 'HEAD', 'POST'],
    body: { json: { cameras: [{ front_door: 'maybe' }] } },
  },
  { method: 'GET', path: '/watchers/mapping', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/rules/responses/', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/rules/search-responses/', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/rules/:rule_id', params: { rule_id: 'no-such-rule' }, allow: ['GET', 'HEAD', 'DELETE'] },
];
