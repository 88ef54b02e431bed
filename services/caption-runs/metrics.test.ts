import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import client from 'prom-client';
import { WebSocket } from 'ws';
import { MetricsSocket, METRICS_SOCKET_PATH } from './metrics/metrics-socket.js';
import { RunMetrics } from './metrics/run-metrics.js';
import { parseRunReport, type RunReport } from './metrics/run-report.js';
import { MetadataRelay } from './relay/metadata-relay.js';
import { ManualTimers } from './testing/manual-timers.js';
import { serveRuns, type ServedRuns } from './testing/serve-app.js';

/** A worker's report: session `a1` unless said, no output counted. */
function report(fields: Partial<RunReport> & Pick<RunReport, 'event'>): RunReport {
  return {
    session: 'a1',
    frames: 0,
    captions: 0,
    dropped_frames: 0,
    reconnects: 0,
    caption_qa: { posted: 0, failed: 0 },
    alerts: { raised: 0, failed: 0 },
    timestamp: 0,
    ...fields,
  };
}

describe('RunMetrics', () => {
  it('counts per run from the workers’ reports on /metrics and gives per-interval rates and mean latency', async () => {
    const registry = new client.Registry();
    let now = 10_000;
    const relay = new MetadataRelay({ bufferMessages: 4, idleMs: 1000, timers: new ManualTimers() });
    const metrics = new RunMetrics(registry, () => now, relay);
    metrics.record('a', report({ event: 'caption', frames: 2, captions: 1, latency_ms: 100 }));
    metrics.record('a', report({ event: 'reconnect', frames: 2, captions: 1, reconnects: 1 }));
    metrics.record(
      'a',
      report({
        event: 'caption',
        frames: 4,
        captions: 2,
        dropped_frames: 1,
        reconnects: 1,
        latency_ms: 300,
        caption_qa: { posted: 0, failed: 2 },
        alerts: { raised: 0, failed: 1 },
      }),
    );
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
    expect(text).toContain('caption_runs_output_failures_total{target="alert-dispatch"} 1');
    expect(text).toContain('caption_runs_stream_subscribers 0');
  });

  it('counts on across a worker started again (a new session counts from 0), and forgets a run once it ended', async () => {
    const registry = new client.Registry();
    const metrics = new RunMetrics(registry, () => 0);
    metrics.record('b', report({ event: 'caption', frames: 5, captions: 5, latency_ms: 10 }));
    // The pod restarted: its worker counts from 0 in a session of its own; a late report of the old one counts nothing.
    metrics.record('b', report({ event: 'caption', session: 'b2', frames: 2, captions: 2, latency_ms: 10 }));
    metrics.record('b', report({ event: 'caption', frames: 6, captions: 6, latency_ms: 10 }));
    metrics.record('b', report({ event: 'caption', session: 'b2', frames: 3, captions: 3, latency_ms: 10 }));
    expect(await registry.metrics()).toContain('caption_runs_frames_total{run_id="b"} 8');
    metrics.record('b', report({ event: 'ended', session: 'b2', frames: 3, captions: 3 }));
    expect(metrics.snapshot().map((p) => p.fields.frames_per_second)).toEqual([8000]);
    expect(metrics.snapshot()).toEqual([]);
    expect(metrics.runCount).toBe(0);
    expect(await registry.metrics()).not.toContain('run_id="b"');
  });
});

describe('parseRunReport', () => {
  it('takes the run from the topic and a valid report only', () => {
    const valid = report({ event: 'caption', frames: 1, captions: 1, latency_ms: 5 });
    expect(parseRunReport('live-video-captioning/cam_1/metrics', JSON.stringify(valid))).toEqual({
      runId: 'cam_1',
      report: valid,
    });
    for (const [topic, payload] of [
      ['live-video-captioning/cam_1', JSON.stringify(valid)],
      ['live-video-captioning/c%20m/metrics', JSON.stringify(valid)],
      ['live-video-captioning/cam/metrics', 'not json'],
      ['live-video-captioning/cam/metrics', JSON.stringify({ ...valid, frames: -1 })],
      ['live-video-captioning/cam/metrics', JSON.stringify({ ...valid, event: 'other' })],
      ['live-video-captioning/cam/metrics', JSON.stringify({ ...valid, captions: '3' })],
    ]) {
      expect([topic, parseRunReport(topic, payload)]).toEqual([topic, undefined]);
    }
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
    metrics.record('cam', report({ event: 'caption', frames: 1, captions: 1, latency_ms: 50 }));
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
