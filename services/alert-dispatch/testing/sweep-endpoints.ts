import type { SweepEndpoint } from '../../../test/support/malformed-sweep.js';

/** The service's error body: `{detail}`, plus `errors` on validation failures. */
export const isDetailBody = (body: unknown) =>
  typeof body === 'object' &&
  body !== null &&
  typeof (body as { detail?: unknown }).detail === 'string' &&
  Object.keys(body).every((key) => key === 'detail' || key === 'errors');

/** Every endpoint, with base bodies refused at validation (the sweep never runs a tool). */
export const ALERT_DISPATCH_SWEEP: SweepEndpoint[] = [
  {
    method: 'POST',
    path: '/alerts',
    allow: ['POST'],
    body: { json: { alert_type: 'sweep', tools: 'log_alert' } },
    emptyBodyValid: true,
  },
  {
    method: 'POST',
    path: '/actions/execute',
    allow: ['POST'],
    body: { json: { source_id: 'cam-1', alert_name: 'sweep', consecutive_count: 0 } },
  },
  {
    method: 'POST',
    path: '/tools/:name/invoke',
    params: { name: 'log_alert' },
    allow: ['POST'],
    body: { json: { arguments: 'not-an-object' } },
    emptyBodyValid: true,
  },
  {
    method: 'POST',
    path: '/mcp/tools/:name/invoke',
    params: { name: 'memory_read' },
    allow: ['POST'],
    body: { json: { arguments: 'not-an-object' } },
  },
  { method: 'GET', path: '/tools', allow: ['GET', 'HEAD'] },
  { method: 'POST', path: '/tools/reload', allow: ['POST'] },
  { method: 'GET', path: '/subscriptions', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/health', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/mcp/status', allow: ['GET', 'HEAD'] },
  { method: 'GET', path: '/mcp/tools', allow: ['GET', 'HEAD'] },
  { method: 'POST', path: '/mcp/reload', allow: ['POST'] },
];
