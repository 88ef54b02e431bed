import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { answering, serveCameraRules, type ServedCameraRules } from './testing/serve-app.js';

let served: ServedCameraRules;

beforeAll(async () => {
  served = await serveCameraRules({ search: answering(false, 'http://127.0.0.1:1/health does not answer') });
});

afterAll(async () => {
  await served?.close();
});

describe('camera-rules skeleton', () => {
  it('answers GET / with the service and its interface version', async () => {
    const res = await fetch(`${served.url}/`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', service: 'camera-rules', version: '1.0.0' });
  });

  it('reports each dependency in /health, degraded (still 200) when one does not answer', async () => {
    const res = await fetch(`${served.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'degraded',
      service: 'camera-rules',
      version: '1.0.0',
      recorder: { kind: 'directory', reachable: true, detail: expect.any(String) },
      search: { reachable: false, detail: 'http://127.0.0.1:1/health does not answer' },
      alerts: { reachable: true, detail: 'answers' },
      broker: null,
    });
  });

  it('serves /openapi.json at interface version 1.0.0, /docs, /redoc and /metrics', async () => {
    const doc = (await (await fetch(`${served.url}/openapi.json`)).json()) as any;
    expect(doc.info.version).toBe('1.0.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/', '/health', '/cameras', '/events']));
    for (const page of ['/docs', '/redoc']) {
      const res = await fetch(`${served.url}${page}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
    }
    const metrics = await fetch(`${served.url}/metrics`);
    expect(await metrics.text()).toMatch(/http_request_duration_seconds_bucket\{.*service="camera-rules"/);
  });

  it('answers GET /cameras 200 with no camera when the recordings directory does not exist', async () => {
    const res = await fetch(`${served.url}/cameras`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([]);
  });

  it('answers GET /events without camera 422 in the HTTPValidationError shape', async () => {
    const res = await fetch(`${served.url}/events?limit=0`);
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: Array<{ loc: string[]; msg: string; type: string }> };
    expect(body.detail).toEqual(
      expect.arrayContaining([
        { loc: ['query', 'camera'], msg: expect.stringMatching(/camera.*required/), type: 'any.required' },
        { loc: ['query', 'limit'], msg: expect.any(String), type: 'number.min' },
      ]),
    );
  });

  it('answers unknown paths 404 as {detail: <string>}', async () => {
    const res = await fetch(`${served.url}/nowhere`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: expect.any(String) });
  });
});
