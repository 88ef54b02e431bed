import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { AllowList } from '../lib/outbound/index.js';
import { RedisSharedState } from '../lib/shared-state/index.js';
import { REDIS_SERVER, startRedisServer } from '../lib/shared-state/testing/redis-server.js';
import { OFFLINE_CAPTIONER } from './catalog/pipelines.js';
import type { VlmConfig } from './config.js';
import { runResourceName } from './runs/run-ids.js';
import { sendJson, serveRuns, type ServedRuns } from './testing/serve-app.js';

const VLM: VlmConfig = {
  baseUrl: 'http://127.0.0.1:9/v1',
  model: 'qwen2-vl',
  timeoutMs: 2000,
  temperature: 0,
  imageMaxSide: 512,
};

let served: ServedRuns | undefined;
let media: string;

beforeAll(async () => {
  media = await mkdtemp(path.join(os.tmpdir(), 'caption-runs-media-'));
  await mkdir(path.join(media, 'demo'));
  await writeFile(path.join(media, 'demo', 'street.mp4'), 'not really a video');
  await writeFile(path.join(os.tmpdir(), 'caption-runs-outside.mp4'), 'outside');
  await symlink(path.join(os.tmpdir(), 'caption-runs-outside.mp4'), path.join(media, 'escape.mp4'));
});

afterAll(async () => {
  await rm(media, { recursive: true, force: true });
  await rm(path.join(os.tmpdir(), 'caption-runs-outside.mp4'), { force: true });
});

afterEach(async () => {
  await served?.close();
  served = undefined;
});

async function serve(config: Parameters<typeof serveRuns>[0] = {}): Promise<ServedRuns> {
  served = await serveRuns(config);
  return served;
}

const post = (runs: ServedRuns, body: unknown) => sendJson(`${runs.api}/generate_captions_alerts`, body);

describe('catalog', () => {
  it('lists the offline captioner alone without a VLM, the detectors of the models dir and both pipeline types', async () => {
    const runs = await serve();
    expect(await (await fetch(`${runs.api}/vlm-models`)).json()).toEqual({
      models: [{ name: OFFLINE_CAPTIONER, device: 'cpu' }],
    });
    const detectors = await (await fetch(`${runs.api}/detection-models`)).json();
    expect(detectors).toEqual({ models: ['centernet-mobilenetv3-coco'] });
    const { pipelines } = await (await fetch(`${runs.api}/pipelines`)).json();
    expect(pipelines.map((p: { pipeline_type: string }) => p.pipeline_type).sort()).toEqual([
      'detection',
      'non-detection',
    ]);
    expect(pipelines[0]).toEqual({
      pipeline_name: expect.any(String),
      pipeline_display_name: expect.any(String),
      pipeline_type: expect.any(String),
    });
  });

  it('asks the VLM server for its models (Bearer key sent), the configured one first; a failing server is a warning', async () => {
    const seen: Array<{ url?: string; authorization?: string }> = [];
    let status = 200;
    const server = http.createServer((req, res) => {
      seen.push({ url: req.url, authorization: req.headers.authorization });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'internvl2' }, { id: 'qwen2-vl' }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
      const runs = await serve({ config: { vlm: { ...VLM, baseUrl, apiKey: 'secret-key' } } });
      expect(await (await fetch(`${runs.api}/vlm-models`)).json()).toEqual({
        models: [
          { name: 'qwen2-vl', device: 'vlm-endpoint' },
          { name: 'internvl2', device: 'vlm-endpoint' },
          { name: OFFLINE_CAPTIONER, device: 'cpu' },
        ],
      });
      expect(seen).toEqual([{ url: '/v1/models', authorization: 'Bearer secret-key' }]);
      status = 500;
      const failing = await (await fetch(`${runs.api}/vlm-models`)).json();
      expect(failing.models).toEqual([
        { name: 'qwen2-vl', device: 'vlm-endpoint' },
        { name: OFFLINE_CAPTIONER, device: 'cpu' },
      ]);
      expect(failing.warning).toMatch(/could not list/);
      expect(JSON.stringify(failing)).not.toContain('secret-key');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('serves /docs, /redoc, /openapi.json (every route) and /metrics', async () => {
    const runs = await serve();
    const openapi = await (await fetch(`${runs.url}/openapi.json`)).json();
    expect(Object.keys(openapi.paths).sort()).toEqual([
      '/api/detection-models',
      '/api/generate_captions_alerts',
      '/api/generate_captions_alerts/metadata-stream',
      '/api/generate_captions_alerts/{run_id}',
      '/api/health',
      '/api/pipelines',
      '/api/vlm-models',
      '/api/ws/metrics',
    ]);
    for (const page of ['/docs', '/redoc']) expect((await fetch(`${runs.url}${page}`)).status).toBe(200);
    await fetch(`${runs.api}/health`);
    const metrics = await (await fetch(`${runs.url}/metrics`)).text();
    expect(metrics).toMatch(/http_request_duration_seconds_count\{[^}]*service="caption-runs"/);
  });
});

describe('starting runs', () => {
  it('applies the defaults: offline captioner on the detection pipeline without a VLM, topic with the runId', async () => {
    const runs = await serve();
    const response = await post(runs, { rtspUrl: 'rtsp://cam-7.lan:8554/live', runName: 'Front door #1' });
    expect(response.status).toBe(200);
    const run = await response.json();
    expect(run).toMatchObject({
      runId: 'Front_door_1',
      mqttTopic: 'live-video-captioning/Front_door_1',
      modelName: OFFLINE_CAPTIONER,
      pipelineName: 'detection_captioning',
      pipelineType: 'detection',
      runName: 'Front door #1',
      prompt: 'Describe what you see in one sentence.',
      maxTokens: 70,
      rtspUrl: 'rtsp://cam-7.lan:8554/live',
      frameRate: 1,
      chunkSize: 1,
      frameWidth: null,
      frameHeight: null,
      detectionModelName: 'centernet-mobilenetv3-coco',
      detectionThreshold: 0.5,
      alerts: [],
      status: 'starting',
      active: true,
    });
    expect(run.peerId).toMatch(/^s[0-9a-f]{7}$/);
    expect(run.pipelineId).toEqual(expect.any(String));
    const resource = await runs.plane.controlPlane.resources.get(
      'CaptionRun',
      'default',
      runResourceName('Front_door_1'),
    );
    expect(resource?.spec).toMatchObject({ runId: 'Front_door_1', peerId: run.peerId, maxTokens: 70 });
  });

  it('uses the VLM by default when one is configured, and keeps what the request gave', async () => {
    const runs = await serve({ config: { vlm: VLM } });
    const run = await (
      await post(runs, {
        rtspUrl: 'rtsps://user:pa55@10.0.0.7/stream1',
        prompt: 'Is anyone at the door?',
        maxNewTokens: 20,
        frameRate: 0.5,
        chunkSize: 4,
        frameWidth: 640,
        frameHeight: 360,
        alerts: [
          { name: 'person', label: 'person' },
          { name: 'fire', captionContains: 'smoke' },
        ],
      })
    ).json();
    expect(run).toMatchObject({
      modelName: 'qwen2-vl',
      pipelineName: 'vlm_captioning',
      pipelineType: 'non-detection',
      prompt: 'Is anyone at the door?',
      maxTokens: 20,
      frameRate: 0.5,
      chunkSize: 4,
      frameWidth: 640,
      frameHeight: 360,
      detectionModelName: null,
      alerts: [
        { name: 'person', label: 'person' },
        { name: 'fire', captionContains: 'smoke' },
      ],
    });
    expect(run.runId).toMatch(/^[0-9a-f]{10}$/);
    // The camera's password is kept for the worker, sealed, and never shown.
    expect(run.rtspUrl).toBe('rtsps://user:***@10.0.0.7/stream1');
    const listed = await (await fetch(`${runs.api}/generate_captions_alerts`)).text();
    expect(listed).not.toContain('pa55');
    const stored = await runs.plane.controlPlane.resources.get('CaptionRun', 'default', runResourceName(run.runId));
    expect(JSON.stringify(stored)).not.toContain('pa55');
    expect(stored?.spec).toMatchObject({
      rtspUrl: 'rtsps://user@10.0.0.7/stream1',
      rtspPassword: expect.stringMatching(/^v1:[A-Za-z0-9_-]+$/),
    });
    expect(runs.credentials!.open(stored!.spec.rtspPassword!, stored!.spec.rtspUrl)).toBe('pa55');
  });

  it('refuses starts where no MQTT broker is configured (a cluster without MQTT_BROKER), and says so in health', async () => {
    const runs = await serve({ canPublish: false });
    const refused = await post(runs, { rtspUrl: 'rtsp://10.0.0.7/stream1' });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ detail: { message: expect.stringContaining('MQTT_BROKER') } });
    expect((await (await fetch(`${runs.api}/health`)).json()).message).toContain('no MQTT broker configured');
    expect(await (await fetch(`${runs.api}/generate_captions_alerts?state=all`)).json()).toEqual([]);
  });

  it('refuses a password in rtspUrl where no key can seal it (a cluster without CAPTION_RUNS_CREDENTIALS_KEY)', async () => {
    const runs = await serve({ credentials: null });
    const refused = await post(runs, { rtspUrl: 'rtsp://user:pa55@10.0.0.7/stream1' });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toEqual({
      detail: [
        {
          loc: ['body', 'rtspUrl'],
          msg: expect.stringContaining('CAPTION_RUNS_CREDENTIALS_KEY'),
          type: expect.any(String),
        },
      ],
    });
    expect((await post(runs, { rtspUrl: 'rtsp://user@10.0.0.7/stream1' })).status).toBe(200);
  });

  it('answers 422, not 500, to a password whose %-escape is malformed', async () => {
    const runs = await serve();
    const refused = await post(runs, { rtspUrl: 'rtsp://user:50%zz@10.0.0.7/stream1' });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toEqual({
      detail: [{ loc: ['body', 'rtspUrl'], msg: expect.stringContaining('%'), type: expect.any(String) }],
    });
    // A well-formed escape is the character it stands for.
    expect((await post(runs, { rtspUrl: 'rtsp://user:50%25@10.0.0.7/stream1' })).status).toBe(200);
  });

  it('answers 422 naming every invalid field at once', async () => {
    const runs = await serve();
    const response = await post(runs, {
      rtspUrl: 'http://cam/stream',
      maxNewTokens: 0,
      detectionThreshold: 1.5,
      frameRate: -1,
      chunkSize: 2.5,
      frameWidth: 0,
      frameHeight: 'tall',
      pipelineType: 'thermal',
      alerts: [{ name: 'no-rule' }],
      surprise: true,
    });
    expect(response.status).toBe(422);
    const { detail } = await response.json();
    const fields = detail.map((d: { loc: string[] }) => d.loc.join('.')).sort();
    expect(fields).toEqual([
      'body.alerts.0',
      'body.chunkSize',
      'body.detectionThreshold',
      'body.frameHeight',
      'body.frameRate',
      'body.frameWidth',
      'body.maxNewTokens',
      'body.pipelineType',
      'body.rtspUrl',
      'body.surprise',
    ]);
    expect(detail.find((d: { loc: string[] }) => d.loc[1] === 'rtspUrl').msg).toMatch(/rtsp:\/\/ or rtsps:\/\//);
    expect(await runs.plane.controlPlane.resources.list('CaptionRun')).toEqual([]);
  });

  it('refuses what needs the configuration: a VLM model without a VLM, the offline captioner without detection, an unknown detector', async () => {
    const runs = await serve();
    const response = await post(runs, {
      rtspUrl: 'rtsp://127.0.0.1/x',
      modelName: 'gpt-4o',
      pipelineName: 'vlm_captioning',
      pipelineType: 'detection',
    });
    expect(response.status).toBe(422);
    const { detail } = await response.json();
    expect(detail.map((d: { loc: string[] }) => d.loc[1]).sort()).toEqual(['modelName', 'pipelineType']);
    const offline = await post(runs, { rtspUrl: 'rtsp://127.0.0.1/x', pipelineType: 'non-detection' });
    expect((await offline.json()).detail).toEqual([
      expect.objectContaining({ loc: ['body', 'pipelineName'], msg: expect.stringMatching(/detection pipeline/) }),
    ]);
    const detector = await post(runs, { rtspUrl: 'rtsp://127.0.0.1/x', detectionModelName: 'movenet-lightning' });
    expect((await detector.json()).detail).toEqual([expect.objectContaining({ loc: ['body', 'detectionModelName'] })]);
  });

  it('accepts files below CAPTION_RUNS_MEDIA_ROOT only: no other scheme, no path escape, no link out', async () => {
    const runs = await serve({ config: { mediaRoot: media } });
    expect((await post(runs, { rtspUrl: 'demo/street.mp4' })).status).toBe(200);
    for (const rtspUrl of ['../etc/passwd', 'file:///etc/passwd', 'escape.mp4', 'demo/missing.mp4', 'demo']) {
      const response = await post(runs, { rtspUrl });
      expect([rtspUrl, response.status]).toEqual([rtspUrl, 422]);
    }
    await runs.close();
    const without = await serve();
    expect((await post(without, { rtspUrl: 'demo/street.mp4' })).status).toBe(422);
  });

  it('narrows RTSP hosts to CAPTION_RUNS_RTSP_ALLOW when set, resolving names', async () => {
    const runs = await serve({
      config: { rtspAllow: AllowList.parse('10.1.0.0/16,cam.allowed.lan') },
      resolveHost: async (host) => (host === 'inside.lan' ? ['10.1.2.3'] : ['192.168.9.9']),
    });
    for (const [url, status] of [
      ['rtsp://10.1.4.4/a', 200],
      ['rtsp://inside.lan/a', 200],
      ['rtsp://cam.allowed.lan/a', 200],
      ['rtsp://10.2.0.1/a', 422],
      ['rtsp://outside.lan/a', 422],
    ] as const) {
      const response = await post(runs, { rtspUrl: url });
      expect([url, response.status]).toEqual([url, status]);
    }
  });

  it('makes runIds unique with _1, _2 and refuses the same stream under the same pipeline (409), even concurrently', async () => {
    const runs = await serve();
    const ids: string[] = [];
    for (const camera of ['a', 'b', 'c']) {
      ids.push((await (await post(runs, { rtspUrl: `rtsp://127.0.0.1/${camera}`, runName: 'lobby' })).json()).runId);
    }
    expect(ids).toEqual(['lobby', 'lobby_1', 'lobby_2']);
    // The same stream however it is written (host case, default port, another login).
    const again = await post(runs, { rtspUrl: 'RTSP://user:pw@127.0.0.1:554/a', runName: 'other' });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ detail: { message: expect.stringContaining('run lobby') } });
    const racing = await Promise.all(
      Array.from({ length: 5 }, () => post(runs, { rtspUrl: 'rtsp://127.0.0.1/race' }).then((r) => r.status)),
    );
    expect(racing.sort()).toEqual([200, 409, 409, 409, 409]);
    // Stopped, the stream may run again.
    expect((await fetch(`${runs.api}/generate_captions_alerts/lobby`, { method: 'DELETE' })).status).toBe(200);
    expect((await post(runs, { rtspUrl: 'rtsp://127.0.0.1/a' })).status).toBe(200);
  });

  (REDIS_SERVER ? it : it.skip)(
    `refuses the same stream started on two replicas at once: one run, the others 409 (Redis shared state)${REDIS_SERVER ? '' : ' — skipped: no redis-server'}`,
    async () => {
      const redis = await startRedisServer();
      const states = await Promise.all(
        ['a', 'b'].map(
          (name) =>
            new RedisSharedState({ url: redis.url, namespace: 'argus:caption-runs:', clientName: `replica-${name}` }),
        ),
      );
      try {
        await Promise.all(states.map((state) => state.ready()));
        const runs = await serve({ sharedState: states[0] });
        const apis = [runs.api, await runs.replica(states[1])];
        const racing = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            sendJson(`${apis[i % 2]}/generate_captions_alerts`, { rtspUrl: 'rtsp://127.0.0.1/shared' }).then(
              (r) => r.status,
            ),
          ),
        );
        expect(racing.sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
        expect(await (await fetch(`${apis[1]}/generate_captions_alerts`)).json()).toHaveLength(1);
      } finally {
        await Promise.all(states.map((state) => state.close()));
        await redis.stop();
      }
    },
  );
});

describe('reading and stopping runs', () => {
  it('lists active runs (?state=all adds stopped ones), reads one, stops it, and answers 404 for unknown ids', async () => {
    const runs = await serve();
    await post(runs, { rtspUrl: 'rtsp://127.0.0.1/one', runName: 'one' });
    await post(runs, { rtspUrl: 'rtsp://127.0.0.1/two', runName: 'two' });
    const one = await (await fetch(`${runs.api}/generate_captions_alerts/one`)).json();
    expect(one).toMatchObject({ runId: 'one', mqttTopic: 'live-video-captioning/one', status: 'starting' });
    const stopped = await fetch(`${runs.api}/generate_captions_alerts/one`, { method: 'DELETE' });
    expect(await stopped.json()).toEqual({ status: 'stopped', runId: 'one' });
    expect(await (await fetch(`${runs.api}/generate_captions_alerts/one`, { method: 'DELETE' })).json()).toEqual({
      status: 'stopped',
      runId: 'one',
    });
    const active = await (await fetch(`${runs.api}/generate_captions_alerts`)).json();
    expect(active.map((r: { runId: string }) => r.runId)).toEqual(['two']);
    const all = await (await fetch(`${runs.api}/generate_captions_alerts?state=all`)).json();
    expect(all.map((r: { runId: string; status: string }) => [r.runId, r.status]).sort()).toEqual([
      ['one', 'stopped'],
      ['two', 'starting'],
    ]);
    for (const method of ['GET', 'DELETE']) {
      for (const id of ['nope', 'bad%20id', 'x'.repeat(300)]) {
        const response = await fetch(`${runs.api}/generate_captions_alerts/${id}`, { method });
        expect([method, id.slice(0, 8), response.status]).toEqual([method, id.slice(0, 8), 404]);
        expect(await response.json()).toEqual({ detail: { message: 'Run not found' } });
      }
    }
    expect((await fetch(`${runs.api}/generate_captions_alerts?state=some`)).status).toBe(422);
  });

  it('shows what the worker reported in status: phase, counters, last caption and error', async () => {
    const runs = await serve();
    await post(runs, { rtspUrl: 'rtsp://127.0.0.1/cam', runName: 'cam' });
    const store = runs.plane.controlPlane.resources;
    const resource = (await store.get('CaptionRun', 'default', runResourceName('cam')))!;
    await store.updateStatus('CaptionRun', {
      ...resource,
      status: {
        phase: 'Reconnecting',
        framesProcessed: 42,
        captionsPublished: 40,
        reconnects: 2,
        lastCaptionTime: '2026-03-10T15:20:00Z',
        lastError: 'the stream ended',
      },
    });
    expect(await (await fetch(`${runs.api}/generate_captions_alerts/cam`)).json()).toMatchObject({
      status: 'reconnecting',
      active: true,
      framesProcessed: 42,
      captionsPublished: 40,
      reconnects: 2,
      lastCaptionTime: '2026-03-10T15:20:00Z',
      lastError: 'the stream ended',
    });
    const latest = (await store.get('CaptionRun', 'default', runResourceName('cam')))!;
    await store.updateStatus('CaptionRun', { ...latest, status: { ...latest.status, phase: 'Failed' } });
    expect(await (await fetch(`${runs.api}/generate_captions_alerts`)).json()).toEqual([]);
    // A failed run no longer holds its stream.
    expect((await post(runs, { rtspUrl: 'rtsp://127.0.0.1/cam' })).status).toBe(200);
  });

  it('keeps runs across a restart of the service and its control plane (the embedded store under the data dir)', async () => {
    const runs = await serve();
    const created = await (await post(runs, { rtspUrl: 'rtsp://127.0.0.1/kept', runName: 'kept' })).json();
    await post(runs, { rtspUrl: 'rtsp://127.0.0.1/gone', runName: 'gone' });
    await fetch(`${runs.api}/generate_captions_alerts/gone`, { method: 'DELETE' });
    await runs.restart();
    expect(await (await fetch(`${runs.api}/generate_captions_alerts/kept`)).json()).toEqual(created);
    const all = await (await fetch(`${runs.api}/generate_captions_alerts?state=all`)).json();
    expect(all.map((r: { runId: string; status: string }) => [r.runId, r.status]).sort()).toEqual([
      ['gone', 'stopped'],
      ['kept', 'starting'],
    ]);
    expect((await post(runs, { rtspUrl: 'rtsp://127.0.0.1/kept' })).status).toBe(409);
  });
});
