import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import client from 'prom-client';
import { WebSocket } from 'ws';
import { MetricsSocket, METRICS_SOCKET_PATH } from './metrics/metrics-socket.js';
import { RunMetrics } from './metrics/run-metrics.js';
import { MetadataRelay } from './relay/metadata-relay.js';
import { ManualTimers } from './testing/manual-timers.js';
import { serveRuns, type ServedRuns } from './testing/serve-app.js';

describe('RunMetrics', () => {
  it('counts per run on /metrics and gives per-interval rates and mean latency for the WebSocket', async () => {
    const registry = new client.Registry();
    let now = 10_000;
    const relay = new MetadataRelay({ bufferMessages: 4, idleMs: 1000, timers: new ManualTimers() });
    const outputs = { embeddingsPosted: 1, embeddingFailures: 2, alertsRaised: 0, alertFailures: 1 };
    const metrics = new RunMetrics(registry, () => now, { relay, outputs });
    metrics.caption({ runId: 'a', latencyMs: 100, framesIn: 2, droppedFrames: 0 });
    metrics.caption({ runId: 'a', latencyMs: 300, framesIn: 4, droppedFrames: 1 });
    metrics.reconnect('a');
    now += 2000;
    expect(metrics.snapshot()).toEqual([
      {
        name: 'caption_run',
        tags: { run_id: 'a' },
        fields: {
          frames_per_second: 2,
          captions_per_second: 1,
          caption_latency_ms: 200,
          dropped_frames: 1,
          reconnects: 1,
        },
        timestamp: 12_000,
      },
    ]);
    now += 1000;
    expect(metrics.snapshot()[0].fields).toEqual({
      frames_per_second: 0,
      captions_per_second: 0,
      caption_latency_ms: null,
      dropped_frames: 1,
      reconnects: 1,
    });
    const text = await registry.metrics();
    expect(text).toContain('caption_runs_frames_total{run_id="a"} 4');
    expect(text).toContain('caption_runs_captions_total{run_id="a"} 2');
    expect(text).toContain('caption_runs_dropped_frames_total{run_id="a"} 1');
    expect(text).toContain('caption_runs_reconnects_total{run_id="a"} 1');
    expect(text).toContain('caption_runs_caption_latency_seconds_count{run_id="a"} 2');
    expect(text).toContain('caption_runs_output_failures_total{target="caption-qa"} 2');
    expect(text).toContain('caption_runs_stream_subscribers 0');
  });
});

describe('the metrics WebSocket', () => {
  let server: http.Server | undefined;
  let served: ServedRuns | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await served?.close();
    server = undefined;
    served = undefined;
  });

  it(`sends {metrics:[{name, tags, fields, timestamp}]} on ${METRICS_SOCKET_PATH} at each tick; other paths 404`, async () => {
    const timers = new ManualTimers();
    const metrics = new RunMetrics(new client.Registry(), () => 5000);
    const socket = new MetricsSocket(metrics, { intervalMs: 1000, maxClients: 1, timers });
    server = http.createServer((_req, res) => res.writeHead(404).end());
    socket.attach(server);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ws = new WebSocket(`${base}${METRICS_SOCKET_PATH}`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const frame = new Promise<any>((resolve) => ws.once('message', (data) => resolve(JSON.parse(String(data)))));
    metrics.caption({ runId: 'cam', latencyMs: 50, framesIn: 1, droppedFrames: 0 });
    expect(timers.armed).toBe(1);
    timers.fireAll();
    expect(await frame).toEqual({
      metrics: [{ name: 'caption_run', tags: { run_id: 'cam' }, fields: expect.any(Object), timestamp: 5000 }],
    });
    // One client at most here: the second is refused; another path is not found.
    for (const [path, status] of [
      [METRICS_SOCKET_PATH, 503],
      ['/api/ws/other', 404],
    ] as const) {
      const refused = new WebSocket(`${base}${path}`);
      const answer = await new Promise<number>((resolve) =>
        refused
          .once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
          .once('error', () => resolve(-1)),
      );
      expect([path, answer]).toEqual([path, status]);
    }
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    socket.close();
    expect(await closed).toBe(1001);
    expect(timers.armed).toBe(0);
  });

  it('answers a plain GET of the socket path 426 in the service error shape', async () => {
    served = await serveRuns();
    const response = await fetch(`${served.api}/ws/metrics`);
    expect(response.status).toBe(426);
    expect(response.headers.get('upgrade')).toBe('websocket');
    expect(await response.json()).toEqual({ detail: { message: expect.stringMatching(/Upgrade Required/) } });
  });
});
