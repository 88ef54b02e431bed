import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import type { RelayTimers } from '../relay/metadata-relay.js';
import type { RunMetrics } from './run-metrics.js';

/** Where the metrics WebSocket is served (absolute path). */
export const METRICS_SOCKET_PATH = '/api/ws/metrics';

/** GET /ws/metrics: documents the WebSocket; a GET without an upgrade is answered 426. */
export function metricsSocketRoute(): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/ws/metrics',
    summary: 'WebSocket: per-run metrics every second',
    description:
      'Upgrade to a WebSocket: every second (CAPTION_RUNS_METRICS_INTERVAL_MS) a text frame ' +
      '`{"metrics": [{"name": "caption_run", "tags": {"run_id"}, "fields": {"frames_per_second", ' +
      '"captions_per_second", "caption_latency_ms", "dropped_frames", "reconnects"}, "timestamp"}]}`.',
    tags: ['metrics'],
    responses: {
      101: { description: 'Switching Protocols: the WebSocket is open (with an upgrade request)' },
      426: { description: 'Upgrade to a WebSocket required' },
    },
    handler: () => {
      throw new HttpError(426, 'Upgrade Required: connect with a WebSocket client', { Upgrade: 'websocket' });
    },
  });
}

/**
 * The metrics WebSocket: every `intervalMs` one text frame `{"metrics": [{name, tags, fields, timestamp}]}` (the
 * original's shape) to every client, one entry per run whose worker reports on MQTT (in this process or a pod).
 * Frames are built once per tick. Clients send nothing (what they send is ignored); at most `maxClients` at once (503
 * beyond).
 */
export class MetricsSocket {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  private readonly clients = new Set<WebSocket>();
  private readonly attached = new Map<http.Server, (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void>();
  private timer: unknown;
  private closed = false;

  constructor(
    private readonly metrics: RunMetrics,
    private readonly options: { intervalMs: number; maxClients: number; timers: RelayTimers },
  ) {}

  /** Serves upgrades on METRICS_SOCKET_PATH of `server`; any other upgrade is refused with 404. */
  attach(server: http.Server): void {
    if (this.attached.has(server)) return;
    const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (req.url ?? '').split('?')[0];
      const full = this.clients.size >= this.options.maxClients;
      if (path !== METRICS_SOCKET_PATH || this.closed || full) {
        const status = path !== METRICS_SOCKET_PATH ? '404 Not Found' : '503 Service Unavailable';
        socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        this.clients.add(ws);
        ws.on('error', () => ws.terminate());
        ws.on('close', () => this.clients.delete(ws));
        if (this.timer === undefined) this.arm();
      });
    };
    server.on('upgrade', onUpgrade);
    this.attached.set(server, onUpgrade);
  }

  private arm(): void {
    this.timer = this.options.timers.set(() => this.tick(), this.options.intervalMs);
  }

  /** Sends one frame to every client (the timer calls it; it runs only while a client is connected). */
  tick(): void {
    this.timer = undefined;
    if (this.closed) return;
    const frame = JSON.stringify({ metrics: this.metrics.snapshot() });
    for (const ws of this.clients) {
      // A client that cannot keep up is closed rather than buffered without bound.
      if (ws.bufferedAmount > 1024 * 1024) ws.terminate();
      else ws.send(frame);
    }
    if (this.clients.size > 0) this.arm();
  }

  /** Closes every client (1001) and stops the timer. */
  close(): void {
    this.closed = true;
    this.options.timers.clear(this.timer);
    for (const [server, listener] of this.attached) server.off('upgrade', listener);
    this.attached.clear();
    for (const ws of this.clients) ws.close(1001, 'service stopping');
    this.clients.clear();
  }
}
