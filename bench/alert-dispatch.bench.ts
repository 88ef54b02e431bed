/**
 * Alert dispatch: (1) throughput and latency of `POST /api/v1/actions/execute` with `log_alert` against a bare Koa
 * JSON endpoint (koa-body + @koa/router, no kit middleware) in the same run; (2) fan-out delay of `alert_action`
 * events to 1,000 SSE + 1,000 WebSocket subscribers while alerts arrive at 500/s for 5 s.
 *
 * The service runs in the main thread with its real wiring (`startAlertDispatch`); load generators and stream
 * clients run in worker threads of this same file. The service logger is at `warn`, so `log_alert` lines and the
 * access log are filtered by winston's level check and console I/O does not dominate (the bare endpoint logs nothing).
 * Fan-out delay = receipt time − the event's `timestamp` (set by the dispatcher just before publish, ms resolution);
 * end-to-end = receipt time − the send time the load generator put in `reason`. Loopback only, bounded durations.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import Koa from 'koa';
import Router from '@koa/router';
import { koaBody } from 'koa-body';

const THROUGHPUT_CONNECTIONS = 32;
const THROUGHPUT_WARMUP_MS = 1000;
const THROUGHPUT_MS = 4000;
const SSE_SUBSCRIBERS = 1000;
const WS_SUBSCRIBERS = 1000;
const ALERT_RATE = 500;
const FANOUT_MS = 5000;
const CONNECT_BATCH = 100;
/** One subscriber in SAMPLE_EVERY (evenly spread in subscription order) has every event timed; all are byte-counted. */
const SAMPLE_EVERY = 10;

/** Latency histogram with 0.05 ms buckets up to 60 s: percentiles without keeping millions of samples. */
class Histogram {
  static readonly BUCKET_MS = 0.05;
  readonly counts = new Uint32Array(1_200_001);
  total = 0;
  add(ms: number): void {
    const bucket = Math.min(this.counts.length - 1, Math.max(0, Math.round(ms / Histogram.BUCKET_MS)));
    this.counts[bucket]++;
    this.total++;
  }
  merge(other: Uint32Array): void {
    for (let i = 0; i < other.length; i++) {
      this.counts[i] += other[i];
      this.total += other[i];
    }
  }
  percentile(p: number): number {
    if (this.total === 0) return NaN;
    const rank = Math.ceil((p / 100) * this.total);
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i];
      if (seen >= rank) return i * Histogram.BUCKET_MS;
    }
    return NaN;
  }
}

/** Absolute time in ms with sub-ms precision, comparable across worker threads. */
const nowMs = () => performance.timeOrigin + performance.now();

function alertBody(reason: string): string {
  return JSON.stringify({ source_id: 'cam-1', alert_name: 'intrusion', reason, tools: ['log_alert'] });
}

// ---------------------------------------------------------------- worker roles

interface LoadJob {
  role: 'load';
  url: string;
  connections: number;
  warmupMs: number;
  durationMs: number;
}

/** Closed-loop load: `connections` keep-alive clients each sending the next request when the last is answered. */
async function loadWorker(job: LoadJob): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const target = new URL(job.url);
  const histogram = new Histogram();
  let measured = 0;
  let errors = 0;
  const start = nowMs();
  const measureFrom = start + job.warmupMs;
  const stopAt = measureFrom + job.durationMs;
  const once = (body: string) =>
    new Promise<number>((resolve) => {
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(body);
    });
  const client = async () => {
    while (nowMs() < stopAt) {
      const sent = nowMs();
      const status = await once(alertBody('load'));
      const done = nowMs();
      if (sent >= measureFrom && done <= stopAt) {
        if (status >= 200 && status < 300) {
          measured++;
          histogram.add(done - sent);
        } else errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: job.connections }, client));
  agent.destroy();
  parentPort!.postMessage({
    rps: measured / (job.durationMs / 1000),
    p50: histogram.percentile(50),
    p99: histogram.percentile(99),
    errors,
  });
}

interface SenderJob {
  role: 'sender';
  url: string;
  rate: number;
  durationMs: number;
}

/** Open-loop sender: keeps `rate` alerts/s regardless of response times; each carries its send time in `reason`. */
async function senderWorker(job: SenderJob): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const target = new URL(job.url);
  let sent = 0;
  let ok = 0;
  let failed = 0;
  const inflight = new Set<Promise<void>>();
  const send = () => {
    const body = alertBody(String(nowMs()));
    const p = new Promise<void>((resolve) => {
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) ok++;
            else failed++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.end(body);
    });
    inflight.add(p);
    void p.then(() => inflight.delete(p));
  };
  const total = Math.round((job.rate * job.durationMs) / 1000);
  const start = nowMs();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((nowMs() - start) / 1000) * job.rate) + 1);
    while (sent < due) {
      send();
      sent++;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  agent.destroy();
  parentPort!.postMessage({ sent, ok, failed, seconds: (nowMs() - start) / 1000 });
}

interface ReceiverJob {
  role: 'receivers';
  baseUrl: string;
  sse: number;
  ws: number;
}

const REASON = Buffer.from('"reason":"');
const TIMESTAMP = Buffer.from('"timestamp":"');
const QUOTE = 0x22;
const OPEN_BRACE = 0x7b;

/**
 * Opens the SSE and WebSocket subscribers as raw sockets (HTTP request / upgrade written by hand). A million events a
 * second cannot be parsed by full SSE/ws clients on the same two cores as the server (they would measure themselves),
 * so one subscriber in SAMPLE_EVERY scans its bytes for each alert_action's `reason` (send time) and `timestamp`
 * (publish time) — events are never split by a chunked-encoding or WebSocket frame header, so scanning with a carried
 * tail is exact — and every subscriber counts its bytes after `init`: all of a kind must end with the same count.
 */
async function receiverWorker(job: ReceiverJob): Promise<void> {
  const fanout = { sse: new Histogram(), ws: new Histogram() };
  const e2e = { sse: new Histogram(), ws: new Histogram() };
  const received = { sse: 0, ws: 0 };
  const publishTimes = new Map<string, number>();
  let closedEarly = 0;
  let finished = false;
  const sockets: net.Socket[] = [];
  const target = new URL(job.baseUrl);

  /**
   * Records every complete event in `data`; returns the offset from which bytes must be kept for the next chunk.
   * `timestamp` is the last field of an alert_action, so finding it and its closing quote finds a complete event.
   */
  const scan = (kind: 'sse' | 'ws', data: Buffer, at: number): number => {
    let pos = 0;
    for (;;) {
      const t = data.indexOf(TIMESTAMP, pos);
      const tEnd = t < 0 ? -1 : data.indexOf(QUOTE, t + TIMESTAMP.length);
      if (tEnd < 0) return t >= 0 ? Math.max(pos, data.lastIndexOf(REASON, t)) : Math.max(pos, data.length - 512);
      if (data[t - 1] === OPEN_BRACE) {
        pos = tEnd + 1; // a keepalive: `{"timestamp": …}`
        continue;
      }
      const stamp = data.toString('latin1', t + TIMESTAMP.length, tEnd);
      let published = publishTimes.get(stamp);
      if (published === undefined) {
        if (publishTimes.size > 10_000) publishTimes.clear();
        published = Date.parse(stamp);
        publishTimes.set(stamp, published);
      }
      received[kind]++;
      fanout[kind].add(at - published);
      const r = data.lastIndexOf(REASON, t);
      const rEnd = data.indexOf(QUOTE, r + REASON.length);
      if (r >= pos) e2e[kind].add(at - Number(data.toString('latin1', r + REASON.length, rEnd)));
      pos = tEnd + 1;
    }
  };

  let opened = 0;
  const counters: Array<{ kind: 'sse' | 'ws'; measured: boolean; bytes: number }> = [];
  /** Subscribers that received as many bytes after `init` as the most-served one of their kind (all get the same bytes). */
  const complete = () => {
    const most = { sse: 0, ws: 0 };
    for (const c of counters) most[c.kind] = Math.max(most[c.kind], c.bytes);
    return counters.filter((c) => c.bytes === most[c.kind]).length;
  };
  const open = (kind: 'sse' | 'ws') =>
    new Promise<void>((resolve, reject) => {
      const measured = opened++ % SAMPLE_EVERY === 0;
      const socket = net.connect(Number(target.port), target.hostname);
      sockets.push(socket);
      const counter = { kind, measured, bytes: 0 };
      counters.push(counter);
      let ready = false;
      let tail: Buffer | undefined;
      socket.on('connect', () => {
        socket.setNoDelay(true);
        socket.write(
          kind === 'sse'
            ? `GET /api/v1/events HTTP/1.1\r\nHost: ${target.host}\r\nAccept: text/event-stream\r\n\r\n`
            : `GET /api/v1/ws HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
                `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
      socket.on('data', (chunk: Buffer) => {
        const at = nowMs();
        if (!ready) {
          // The init event follows the response head; it carries no reason/timestamp pair.
          if (chunk.includes('"event":"init"') || chunk.includes('event: init')) {
            ready = true;
            resolve();
          }
          return;
        }
        counter.bytes += chunk.length;
        if (!measured) return;
        const data = tail ? Buffer.concat([tail, chunk]) : chunk;
        const keepFrom = scan(kind, data, at);
        tail = keepFrom < data.length ? data.subarray(keepFrom) : undefined;
      });
      socket.on('close', () => {
        if (!finished) closedEarly++;
      });
      socket.on('error', reject);
    });

  // Batches keep the server's accept backlog from overflowing.
  for (const [kind, count] of [
    ['sse', job.sse],
    ['ws', job.ws],
  ] as const) {
    for (let i = 0; i < count; i += CONNECT_BATCH) {
      await Promise.all(Array.from({ length: Math.min(CONNECT_BATCH, count - i) }, () => open(kind)));
    }
  }
  parentPort!.postMessage({ type: 'ready' });
  await new Promise<void>((resolve) =>
    parentPort!.on('message', (message) => {
      if (message === 'progress') {
        const measured = counters.filter((c) => c.measured).length;
        parentPort!.postMessage({ received: received.sse + received.ws, measured, complete: complete() });
      } else resolve();
    }),
  );
  finished = true;
  for (const s of sockets) s.destroy();
  parentPort!.postMessage({
    type: 'result',
    received,
    closedEarly,
    complete: complete(),
    measured: counters.filter((c) => c.measured).length,
    fanout: { sse: fanout.sse.counts, ws: fanout.ws.counts },
    e2e: { sse: e2e.sse.counts, ws: e2e.ws.counts },
  });
}

if (!isMainThread && workerData?.role) {
  const job = workerData as LoadJob | SenderJob | ReceiverJob;
  if (job.role === 'load') await loadWorker(job);
  else if (job.role === 'sender') await senderWorker(job);
  else await receiverWorker(job);
}

// ---------------------------------------------------------------- main thread

/** Workers load this TypeScript file through tsx's loader API (a worker does not inherit the parent's loader hooks). */
const WORKER_BOOT = `
  const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))});
  register();
  await import(${JSON.stringify(import.meta.url)});
`;

function spawn(job: LoadJob | SenderJob | ReceiverJob): Worker {
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(WORKER_BOOT)}`), { workerData: job });
}

function result<T>(worker: Worker): Promise<T> {
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

async function startBareKoa(): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Koa();
  const router = new Router();
  router.post(
    '/echo',
    koaBody({ json: true, multipart: false, urlencoded: false, text: false }) as unknown as Koa.Middleware,
    (ctx) => {
      const body = (ctx.request as any).body;
      ctx.body = {
        event_id: 'x',
        source_id: body.source_id,
        alert_name: body.alert_name,
        actions_taken: [],
        timestamp: new Date().toISOString(),
      };
    },
  );
  app.use(router.routes());
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

const ms = (v: number) => `${v.toFixed(2)} ms`;

/** Runs the two measurements and prints their figures. */
export default async function run(): Promise<void> {
  const { startAlertDispatch } = await import('../services/alert-dispatch/main.js');
  const { createLogger } = await import('../services/lib/log/index.js');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'alert-dispatch-bench-'));
  const logger = createLogger({ service: 'alert-dispatch', level: 'warn' });
  const service = await startAlertDispatch(
    { ALERT_DISPATCH_HOST: '127.0.0.1', ALERT_DISPATCH_PORT: '0', ARGUS_DATA_DIR: dataDir },
    logger,
  );
  const bare = await startBareKoa();
  try {
    const load = (url: string) =>
      result<LoadResult>(
        spawn({
          role: 'load',
          url,
          connections: THROUGHPUT_CONNECTIONS,
          warmupMs: THROUGHPUT_WARMUP_MS,
          durationMs: THROUGHPUT_MS,
        }),
      );
    const baseline = await load(`${bare.url}/echo`);
    const execute = await load(`${service.url}/api/v1/actions/execute`);
    console.log(
      `machine: ${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} at start`,
    );
    console.log(`throughput (${THROUGHPUT_CONNECTIONS} keep-alive connections, ${THROUGHPUT_MS / 1000} s, loopback):`);
    console.log(
      `  bare Koa JSON endpoint      ${baseline.rps.toFixed(0)} req/s  p50 ${ms(baseline.p50)}  p99 ${ms(baseline.p99)}  errors ${baseline.errors}`,
    );
    console.log(
      `  POST /actions/execute       ${execute.rps.toFixed(0)} req/s  p50 ${ms(execute.p50)}  p99 ${ms(execute.p99)}  errors ${execute.errors}`,
    );
    console.log(`  ratio execute / bare        ${(execute.rps / baseline.rps).toFixed(2)}  (target >= 0.5)`);

    const receivers = spawn({ role: 'receivers', baseUrl: service.url, sse: SSE_SUBSCRIBERS, ws: WS_SUBSCRIBERS });
    const connectStart = nowMs();
    await new Promise<void>((resolve, reject) => {
      receivers.once('error', reject);
      receivers.once('message', () => resolve());
    });
    const connectSeconds = (nowMs() - connectStart) / 1000;
    const busyBefore = performance.eventLoopUtilization();
    const cpuBefore = process.cpuUsage();
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const fanoutStart = nowMs();
    const sender = await result<{ sent: number; ok: number; failed: number; seconds: number }>(
      spawn({ role: 'sender', url: `${service.url}/api/v1/actions/execute`, rate: ALERT_RATE, durationMs: FANOUT_MS }),
    );
    const busy = performance.eventLoopUtilization(busyBefore).utilization;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuCores = (cpu.user + cpu.system) / 1000 / (nowMs() - fanoutStart);
    loopDelay.disable();
    // Let the receivers drain what is still in flight (bounded), so "delivered" counts backlog, not a cut-off.
    const drainStart = nowMs();
    for (let i = 0; i < 150; i++) {
      receivers.postMessage('progress');
      const progress = await new Promise<{ received: number; measured: number; complete: number }>((resolve) =>
        receivers.once('message', resolve),
      );
      const all = SSE_SUBSCRIBERS + WS_SUBSCRIBERS;
      if (progress.received >= sender.ok * progress.measured && progress.complete === all) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const drainSeconds = (nowMs() - drainStart) / 1000;
    const done = result<{
      received: { sse: number; ws: number };
      closedEarly: number;
      complete: number;
      measured: number;
      fanout: { sse: Uint32Array; ws: Uint32Array };
      e2e: { sse: Uint32Array; ws: Uint32Array };
    }>(receivers);
    receivers.postMessage('stop');
    const r = await done;
    await receivers.terminate();
    const hist = (counts: Uint32Array) => {
      const h = new Histogram();
      h.merge(counts);
      return h;
    };
    console.log(
      `fan-out (${SSE_SUBSCRIBERS} SSE + ${WS_SUBSCRIBERS} WebSocket subscribers, connected in ${connectSeconds.toFixed(1)} s; ` +
        `${sender.ok}/${sender.sent} alerts at ${(sender.sent / sender.seconds).toFixed(0)}/s, ${sender.failed} failed):`,
    );
    for (const kind of ['sse', 'ws'] as const) {
      const f = hist(r.fanout[kind]);
      const e = hist(r.e2e[kind]);
      console.log(
        `  ${kind.padEnd(3)} timed ${r.received[kind]} deliveries  ` +
          `publish→receipt p50 ${ms(f.percentile(50))} p99 ${ms(f.percentile(99))} max ${ms(f.percentile(100))}  ` +
          `send→receipt p50 ${ms(e.percentile(50))} p99 ${ms(e.percentile(99))}`,
      );
    }
    const all = new Histogram();
    all.merge(r.fanout.sse);
    all.merge(r.fanout.ws);
    console.log(
      `  all publish→receipt p99 ${ms(all.percentile(99))} (target < 50 ms) over ${r.measured} timed subscribers (1 in ` +
        `${SAMPLE_EVERY}); ${r.complete}/${SSE_SUBSCRIBERS + WS_SUBSCRIBERS} subscribers received every byte; ` +
        `${r.closedEarly} closed early; drained ${drainSeconds.toFixed(1)} s after the last alert`,
    );
    console.log(
      `  service thread busy ${(busy * 100).toFixed(0)}% (event-loop utilisation), loop delay p99 ` +
        `${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms; whole process (service + clients) ${cpuCores.toFixed(2)} cores`,
    );
  } finally {
    await bare.close();
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
