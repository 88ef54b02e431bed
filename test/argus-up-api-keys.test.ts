import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WebSocket } from 'ws';
import { AlertDispatchSink, type Alert } from '../services/camera-rules/actions/alert-sink.js';
import { DataprepSearchIndex } from '../services/camera-rules/actions/search-index.js';
import { postJson } from '../services/caption-runs/worker/outputs.js';
import { multiPoseModelsDir } from '../services/frame-analysis/testing/serve-app.js';
import { startArgusUp, type RunningArgusUp } from './support/argus-process.js';
import { checkedFetch } from './support/contract-check.js';
import { malformedSweep } from './support/malformed-sweep.js';
import { SWEPT_SERVICES as SERVICES } from './support/swept-services.js';

/** The keys `argus up` is started with (ARGUS_API_KEYS): two, as during a rotation. */
const KEY = 'argus-up-key-0123456789abcdef';
const NEXT_KEY = 'argus-up-next-0123456789abcdef';
const WITH_KEY = { authorization: `Bearer ${KEY}` };

/** A request each service serves 200 with a key (frame-analysis has no such request: its one route takes frames). */
const SERVED: Record<string, string | undefined> = {
  dataprep: '/media',
  'alert-dispatch': '/tools',
  'frame-analysis': undefined,
  'caption-qa': '/model',
  'caption-runs': '/pipelines',
  'camera-rules': '/cameras',
};

let up: RunningArgusUp;
/** Each service's root URL and API base URL in the running process. */
const roots: Record<string, string> = {};
const apis: Record<string, string> = {};

beforeAll(async () => {
  up = await startArgusUp(Object.keys(SERVICES), await multiPoseModelsDir(), {
    ARGUS_API_KEYS: `${KEY},${NEXT_KEY}`,
  });
  for (const [name, root] of Object.entries(up.roots)) {
    roots[name] = root;
    apis[name] = `${root}${SERVICES[name].basePath}`;
  }
}, 180_000);

afterAll(() => up?.stop());

/** Opens a WebSocket; resolves 101 once open, else the status of the refusal. */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.on('error', reject);
  });
}

describe('argus up with ARGUS_API_KEYS', () => {
  it.each(Object.keys(SERVICES))(
    '%s answers every endpoint without an accepted key 401 with a Bearer challenge, health staying open',
    async (name) => {
      const report = await malformedSweep({
        base: apis[name],
        endpoints: SERVICES[name].endpoints,
        errorShape: SERVICES[name].errorShape,
        health: [`${apis[name]}/health`],
        apiKey: KEY,
        only: 'api-keys',
      });
      expect(report.failures).toEqual([]);
      expect(report.cases).toBeGreaterThan(0);
      expect(up.process.child.exitCode).toBeNull();
    },
    120_000,
  );

  it.each(Object.keys(SERVICES))('%s serves either key, and keeps metrics and docs open', async (name) => {
    const path = SERVED[name];
    if (path) {
      for (const key of [KEY, NEXT_KEY]) {
        const res = await checkedFetch(`${apis[name]}${path}`, { headers: { authorization: `Bearer ${key}` } });
        expect([path, res.status]).toEqual([path, 200]);
        await res.arrayBuffer();
      }
    }
    for (const open of ['/metrics', '/openapi.json', '/docs', '/redoc']) {
      const res = await fetch(`${roots[name]}${open}`);
      expect([open, res.status]).toEqual([open, 200]);
      await res.arrayBuffer();
    }
  });

  it("guards alert-dispatch's event stream and both WebSocket endpoints", async () => {
    expect((await checkedFetch(`${apis['alert-dispatch']}/events`)).status).toBe(401);
    const stream = new AbortController();
    const events = await checkedFetch(`${apis['alert-dispatch']}/events`, { headers: WITH_KEY, signal: stream.signal });
    expect(events.status).toBe(200);
    expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
    stream.abort();
    const sockets = [`${apis['alert-dispatch']}/ws`, `${apis['caption-runs']}/ws/metrics`].map((url) =>
      url.replace(/^http/, 'ws'),
    );
    for (const url of sockets) {
      expect([url, await upgradeStatus(url)]).toEqual([url, 401]);
      expect([url, await upgradeStatus(url, { authorization: 'Bearer wrong-key-0123456789abcdef' })]).toEqual([
        url,
        401,
      ]);
      expect([url, await upgradeStatus(url, WITH_KEY)]).toEqual([url, 101]);
    }
  });

  it("camera-rules' and the caption worker's clients of other services send the first key", async () => {
    const alert: Alert = {
      alert_type: 'camera_rule',
      source_id: 'front-door',
      alert_name: 'api-key-test',
      answer: 'YES',
      reason: 'checking the key',
      metadata: {},
      timestamp: new Date().toISOString(),
      tools: ['log_alert'],
      payloads: [],
    };
    const alerts = `${apis['alert-dispatch']}`;
    await expect(
      new AlertDispatchSink({ url: alerts, timeoutMs: 10_000, apiKeys: [KEY] }).send(alert),
    ).resolves.toMatch(/HTTP 2\d\d/);
    await expect(new AlertDispatchSink({ url: alerts, timeoutMs: 10_000 }).send(alert)).rejects.toThrow(/401/);
    const target = { url: `${alerts}/alerts`, timeoutMs: 10_000 };
    await expect(postJson({ ...target, apiKeys: [KEY] }, alert, new AbortController().signal)).resolves.toBe(202);
    await expect(postJson(target, alert, new AbortController().signal)).rejects.toThrow(/401/);
    // A bucket name dataprep refuses (400), so that nothing is embedded: past the key, not stopped by it.
    const index = (apiKeys?: string[]) =>
      new DataprepSearchIndex({
        url: apis.dataprep,
        bucket: 'Not_A_Bucket',
        timeoutMs: 10_000,
        frameInterval: 1,
        apiKeys,
      });
    const media = { bytes: Buffer.from('x'), filename: 'e.jpg', contentType: 'image/jpeg' as const, tags: [] };
    await expect(index([KEY]).add(media)).rejects.toThrow(/400/);
    await expect(index().add(media)).rejects.toThrow(/401/);
  });
});
