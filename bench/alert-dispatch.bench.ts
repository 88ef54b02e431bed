import { loadAlertDispatchConfig } from '../services/alert-dispatch/config.js';
/**
 * Alert dispatch: (1) throughput and latency of `POST /api/v1/actions/execute` with `log_alert` against a bare Koa
 * JSON endpoint (koa-body + @koa/router, no kit middleware) in the same run; (2) fan-out delay of `alert_action`
 * events to 1,000 SSE + 1,000 WebSocket subscribers while alerts arrive at 500/s for 5 s; (3) both again with two
 * replicas sharing a real redis-server (`ARGUS_REDIS_URL`), load, senders and subscribers split evenly over them,
 * against the single in-memory instance in the same run (skipped with a notice where redis-server is not installed).
 * The two replicas run in this process, on one event loop: a pessimistic set-up (no second core for the second
 * replica), so that the service CPU figures stay this process's.
 *
 * The service runs in this process with its real wiring (`startAlertDispatch`); load generators and stream clients
 * run as child processes of this same file. The service logger is at `warn`, so `log_alert` lines and the
 * access log are filtered by winston's level check (the bare endpoint logs nothing either); a second instance logs at
 * `info` into a file, so that execute is also measured with every `log_alert` line written.
 * Fan-out delay = receipt time − the event's `timestamp` (set by the dispatcher when the dispatch starts, ms resolution);
 * end-to-end = receipt time − the send time the load generator put in `reason`. Loopback only, bounded durations.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import path from 'node:path';
import { fork, type ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import Router from '@koa/router';
import Joi from 'joi';
import type { Logger } from '../services/lib/log/index.js';
import { koaBody } from 'koa-body';

/** The arguments startAlertDispatch takes for `env`: its validated configuration and the environment itself. */
const configured = (env: NodeJS.ProcessEnv) => [loadAlertDispatchConfig(env), env] as const;

const THROUGHPUT_CONNECTIONS = 32;
const THROUGHPUT_WARMUP_MS = 500;
const THROUGHPUT_MS = 2000;
const SSE_SUBSCRIBERS = 1000;
const WS_SUBSCRIBERS = 1000;
/** The target rate last; a lighter one first shows the delay when the machine is not saturated. */
const FANOUT_RATES = [100, 500];
const FANOUT_MS = 5000;
const THROUGHPUT_ROUNDS = 4;
const CONNECT_BATCH = 100;
/** One subscriber in SAMPLE_EVERY (evenly spread in subscription order) has every event timed; all are byte-counted. */
const SAMPLE_EVERY = 10;
/** Keep-alive sockets of the open-loop sender. */
const SENDER_SOCKETS = 64;

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

/**
 * One keep-alive request (a JSON POST when `body` is given); resolves with the status code (0 on a connection error),
 * the body drained.
 */
function request(agent: http.Agent, target: URL, method: 'GET' | 'POST', body?: string): Promise<number> {
  return new Promise<number>((resolve) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method,
        agent,
        headers:
          body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/** Closed-loop load: `connections` keep-alive clients each sending the next request when the last is answered. */
async function loadWorker(job: LoadJob): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const target = new URL(job.url);
  const histogram = new Histogram();
  let measured = 0;
  let answered = 0;
  let errors = 0;
  const start = nowMs();
  const measureFrom = start + job.warmupMs;
  const stopAt = measureFrom + job.durationMs;
  const client = async () => {
    while (nowMs() < stopAt) {
      const sent = nowMs();
      const status = await request(agent, target, 'POST', alertBody('load'));
      const done = nowMs();
      answered++;
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
  reply({
    rps: measured / (job.durationMs / 1000),
    p50: histogram.percentile(50),
    p99: histogram.percentile(99),
    errors,
    answered,
  });
}

interface SenderJob {
  role: 'sender';
  url: string;
  healthUrl: string;
  rate: number;
  durationMs: number;
}

/** Open-loop sender: keeps `rate` alerts/s regardless of response times; each carries its send time in `reason`. */
async function senderWorker(job: SenderJob): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: SENDER_SOCKETS });
  const target = new URL(job.url);
  // Open the keep-alive sockets first (health checks, not alerts), so that connection set-up and a cold client are
  // not counted in the first alerts' send→receipt times.
  await Promise.all(Array.from({ length: SENDER_SOCKETS }, () => request(agent, new URL(job.healthUrl), 'GET')));
  let sent = 0;
  let ok = 0;
  let failed = 0;
  const inflight = new Set<Promise<void>>();
  const send = () => {
    const body = alertBody(String(nowMs()));
    const p = request(agent, target, 'POST', body).then((status) => {
      if (status === 200) ok++;
      else failed++;
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
  const cpu = process.cpuUsage(); // the whole process, start-up included
  reply({ sent, ok, failed, seconds: (nowMs() - start) / 1000, cpuMs: (cpu.user + cpu.system) / 1000 });
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
 * Opens the SSE and WebSocket subscribers as raw sockets (HTTP request / upgrade written by hand, reads into a shared
 * buffer). A million events a second cannot be parsed by full SSE/ws clients on the same two cores as the server (they
 * would measure themselves), so one subscriber in SAMPLE_EVERY scans its bytes for each alert_action's `reason` (send
 * time) and `timestamp` (publish time) — events are never split by a chunked-encoding or WebSocket frame header, so
 * scanning with a carried tail is exact — and every subscriber counts its bytes after `init`: all of a kind must end
 * with the same count.
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
  // Sockets read into one shared buffer (net's `onread`): no Buffer and no stream 'data' event per read, which
  // would make the measuring client cost more CPU than the service it measures.
  const readBuffer = Buffer.allocUnsafe(256 * 1024);
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
      const socket = net.connect({
        port: Number(target.port),
        host: target.hostname,
        onread: {
          buffer: readBuffer,
          callback: (nread: number, buffer: Uint8Array) => {
            onData(Buffer.from(buffer.buffer, buffer.byteOffset, nread));
            return true;
          },
        },
      });
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
      // `chunk` lies in the shared read buffer: only a copy may outlive this call.
      const onData = (chunk: Buffer) => {
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
        tail = keepFrom < data.length ? Buffer.from(data.subarray(keepFrom)) : undefined;
      };
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
  reply({ type: 'ready' });
  let cpuSince = process.cpuUsage();
  // Protocol: 'progress' → counts; 'collect' → this phase's histograms (then reset); 'stop' → close and exit.
  await new Promise<void>((resolve) =>
    process.on('message', (message) => {
      const measured = counters.filter((c) => c.measured).length;
      if (message === 'progress') {
        reply({ received: received.sse + received.ws, measured, complete: complete() });
        return;
      }
      if (message === 'stop') {
        finished = true;
        for (const s of sockets) s.destroy();
        resolve();
        return;
      }
      const cpu = process.cpuUsage(cpuSince);
      cpuSince = process.cpuUsage();
      reply({
        received: { ...received },
        cpuMs: (cpu.user + cpu.system) / 1000,
        closedEarly,
        complete: complete(),
        measured,
        fanout: { sse: fanout.sse.counts, ws: fanout.ws.counts },
        e2e: { sse: e2e.sse.counts, ws: e2e.ws.counts },
      });
      for (const kind of ['sse', 'ws'] as const) {
        fanout[kind] = new Histogram();
        e2e[kind] = new Histogram();
        received[kind] = 0;
      }
    }),
  );
}

const ROLE_FLAG = '--alert-dispatch-bench-role';

if (process.argv[2] === ROLE_FLAG) {
  const job = JSON.parse(process.argv[3]) as LoadJob | SenderJob | ReceiverJob;
  if (job.role === 'load') await loadWorker(job);
  else if (job.role === 'sender') await senderWorker(job);
  else await receiverWorker(job);
  process.disconnect?.();
}

/** Sends a message to the benchmark process (roles run as child processes of it). */
function reply(message: unknown): void {
  process.send!(message);
}

// ---------------------------------------------------------------- main process

/**
 * Clients run as child processes, not worker threads, so that `process.cpuUsage()` here is the service's own CPU
 * time: on a machine whose cores are shared, event-loop utilisation alone cannot tell work from waiting for a core.
 */
function spawn(job: LoadJob | SenderJob | ReceiverJob): ChildProcess {
  return fork(fileURLToPath(import.meta.url), [ROLE_FLAG, JSON.stringify(job)], {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

function result<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`benchmark client exited with ${code}`));
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message as T);
    });
    child.once('exit', onExit);
  });
}

/** Serves `app` on a free loopback port. */
async function listenOnLoopback(app: Koa): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
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
  return listenOnLoopback(app);
}

interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Requests answered in all, warm-up included. */
  answered: number;
  /** The service process's CPU time over the whole load run, per answered request. */
  cpuUsPerRequest?: number;
}

const ms = (v: number) => `${v.toFixed(2)} ms`;

/** Runs the two measurements and prints their figures. */
export default async function run(): Promise<void> {
  // Imported here, not at the top: the client processes load this file too and need none of it.
  const { startAlertDispatch } = await import('../services/alert-dispatch/main.js');
  const { createLogger } = await import('../services/lib/log/index.js');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'alert-dispatch-bench-'));
  const logger = createLogger({ service: 'alert-dispatch', level: 'warn' });
  const service = await startAlertDispatch(
    ...configured({ ALERT_DISPATCH_HOST: '127.0.0.1', ALERT_DISPATCH_PORT: '0', ARGUS_DATA_DIR: dataDir }),
    logger,
  );
  // A second instance whose log_alert lines are written: JSON at info into a file, with a synchronous write per
  // batch of lines, as stdout does when it is a file or a pipe.
  const logFd = openSync(path.join(dataDir, 'service.log'), 'w');
  const logFile = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writeSync(logFd, chunk);
      callback();
    },
  });
  const logging = await startAlertDispatch(
    ...configured({
      ALERT_DISPATCH_HOST: '127.0.0.1',
      ALERT_DISPATCH_PORT: '0',
      ARGUS_DATA_DIR: path.join(dataDir, 'logging'),
    }),
    createLogger({
      service: 'alert-dispatch',
      level: 'info',
      json: true,
      streams: { stdout: logFile, stderr: logFile },
    }),
  );
  const bare = await startBareKoa();
  const kit = await startKitRoute(logger);
  try {
    const loadavg = () =>
      os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ');
    console.log(`machine: ${os.cpus().length} cores, load average ${loadavg()} at start`);
    await measureThroughput([
      { name: 'bare Koa', url: `${bare.url}/echo` },
      { name: 'kit route', url: `${kit.url}/echo` },
      { name: 'POST /actions/execute', url: `${service.url}/api/v1/actions/execute` },
      { name: 'execute, lines written', url: `${logging.url}/api/v1/actions/execute` },
    ]);
    const lines = (await readFile(path.join(dataDir, 'service.log'), 'utf8')).split('\n').length - 1;
    console.log(`  (${lines} log lines written by the second instance)`);
    await measureFanout('one instance, in memory', [service.url]);
    await measureReplicas(service.url, logger, dataDir);
    console.log(`load average ${loadavg()} at the end`);
  } finally {
    await bare.close();
    await kit.close();
    await service.close();
    await logging.close();
    // Its last lines are written at the end of the turn: only then is the file closed.
    await new Promise((resolve) => setImmediate(resolve));
    closeSync(logFd);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * Two replicas on one fresh redis-server: execute throughput against the single in-memory instance (`singleUrl`),
 * interleaved in the same rounds, then fan-out with the subscribers and senders split over both replicas.
 */
async function measureReplicas(singleUrl: string, logger: Logger, dataDir: string): Promise<void> {
  const { REDIS_SERVER, startRedisServer } = await import('../services/lib/shared-state/testing/redis-server.js');
  if (!REDIS_SERVER) {
    console.log('two replicas on Redis: SKIPPED (redis-server is not installed: apt-get install redis-server)');
    return;
  }
  const { startAlertDispatch } = await import('../services/alert-dispatch/main.js');
  const redis = await startRedisServer();
  const replicas = await Promise.all(
    ['a', 'b'].map((name) =>
      startAlertDispatch(
        ...configured({
          ALERT_DISPATCH_HOST: '127.0.0.1',
          ALERT_DISPATCH_PORT: '0',
          ARGUS_DATA_DIR: path.join(dataDir, `replica-${name}`),
          ARGUS_REDIS_URL: redis.url,
        }),
        logger,
      ),
    ),
  );
  try {
    const urls = replicas.map((r) => `${r.url}/api/v1/actions/execute`);
    const single = 'one instance, in memory';
    const pair = 'two replicas on Redis';
    const rounds = await measureThroughput([
      { name: single, url: `${singleUrl}/api/v1/actions/execute` },
      { name: pair, url: urls[0], alsoUrls: urls.slice(1) },
    ]);
    const ratios = rounds.map((r) => r.get(pair)!.rps / r.get(single)!.rps).sort((a, b) => a - b);
    console.log(
      `  two replicas on Redis / one instance in memory: median ${ratios[Math.floor(ratios.length / 2)].toFixed(2)} ` +
        `(rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}); target >= 0.8`,
    );
    await measureFanout(
      pair,
      replicas.map((r) => r.url),
    );
  } finally {
    await Promise.all(replicas.map((r) => r.close()));
    await redis.stop();
  }
}

/** Load results of the same target over several URLs at once (replicas): rates and counts add, latencies the worst. */
function combine(results: LoadResult[]): LoadResult {
  return {
    rps: results.reduce((n, r) => n + r.rps, 0),
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    errors: results.reduce((n, r) => n + r.errors, 0),
    answered: results.reduce((n, r) => n + r.answered, 0),
  };
}

/**
 * Interleaved rounds (the order rotates each round) so that drifting machine load hits every endpoint alike. The kit
 * route (createHttpApp with a joi-validated body, same logger) separates the platform kit's share from dispatch's.
 * A target with `alsoUrls` (replicas) gets the same connections in all, split evenly over its URLs at once.
 */
async function measureThroughput(
  targets: Array<{ name: string; url: string; alsoUrls?: string[] }>,
): Promise<Array<Map<string, LoadResult>>> {
  const load = async (target: { url: string; alsoUrls?: string[] }) => {
    const urls = [target.url, ...(target.alsoUrls ?? [])];
    const results = await Promise.all(
      urls.map((url) =>
        result<LoadResult>(
          spawn({
            role: 'load',
            url,
            connections: THROUGHPUT_CONNECTIONS / urls.length,
            warmupMs: THROUGHPUT_WARMUP_MS,
            durationMs: THROUGHPUT_MS,
          }),
        ),
      ),
    );
    return combine(results);
  };
  const rounds: Array<Map<string, LoadResult>> = [];
  for (let i = 0; i < THROUGHPUT_ROUNDS; i++) {
    const round = new Map<string, LoadResult>();
    for (let j = 0; j < targets.length; j++) {
      const target = targets[(i + j) % targets.length];
      const cpuBefore = process.cpuUsage();
      const res = await load(target);
      const cpu = process.cpuUsage(cpuBefore);
      res.cpuUsPerRequest = (cpu.user + cpu.system) / res.answered;
      round.set(target.name, res);
    }
    rounds.push(round);
  }
  console.log(
    `throughput (${THROUGHPUT_CONNECTIONS} keep-alive connections, ${THROUGHPUT_ROUNDS} interleaved rounds of ` +
      `${THROUGHPUT_MS / 1000} s per endpoint, loopback):`,
  );
  const baseline = targets[0].name;
  for (const target of targets) {
    const runs = rounds.map((r) => r.get(target.name)!);
    const ratios = rounds.map((r) => r.get(target.name)!.rps / r.get(baseline)!.rps).sort((a, b) => a - b);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    console.log(
      `  ${target.name.padEnd(22)} median ${median(runs.map((r) => r.rps))
        .toFixed(0)
        .padStart(6)} req/s, ` +
        `p50 ${ms(median(runs.map((r) => r.p50)))}, p99 ${ms(median(runs.map((r) => r.p99)))}, ` +
        `errors ${runs.reduce((n, r) => n + r.errors, 0)}, service CPU ` +
        `${median(runs.map((r) => r.cpuUsPerRequest!)).toFixed(1)} µs/request; / ${baseline}: median ` +
        `${ratios[Math.floor(ratios.length / 2)].toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
    );
  }
  if (targets.some((t) => t.name === 'bare Koa')) console.log('  target: execute / bare Koa >= 0.5');
  return rounds;
}

/** The platform kit's app around a trivial joi-validated JSON route: what every service pays before its own work. */
async function startKitRoute(logger: Logger): Promise<{ url: string; close(): Promise<void> }> {
  const { createHttpApp, defineRoute, detailStyle } = await import('../services/lib/http/index.js');
  const { app } = createHttpApp({
    info: { title: 'kit baseline', version: '1' },
    service: 'kit-baseline',
    logger,
    errors: detailStyle(),
    routes: [
      defineRoute({
        method: 'post',
        path: '/echo',
        summary: 'echo',
        request: {
          body: Joi.object({
            source_id: Joi.string().required(),
            alert_name: Joi.string().required(),
            reason: Joi.string(),
            tools: Joi.array().items(Joi.string()),
          }),
        },
        responses: { 200: { description: 'ok' } },
        handler: (ctx) => {
          ctx.body = {
            event_id: 'x',
            source_id: ctx.state.body.source_id,
            alert_name: ctx.state.body.alert_name,
            actions_taken: [],
            timestamp: new Date().toISOString(),
          };
        },
      }),
    ],
  });
  return listenOnLoopback(app);
}

/**
 * Time the service's main thread spent runnable but waiting for a core (Linux schedstat), in ms; NaN elsewhere. On a
 * machine shared with other jobs this, not the service's own work, is what stretches delivery delays.
 */
async function runQueueWaitMs(): Promise<number> {
  try {
    const stat = await readFile(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8');
    return Number(stat.split(' ')[1]) / 1e6;
  } catch {
    return NaN;
  }
}

interface ReceiverResult {
  received: { sse: number; ws: number };
  /** CPU time the receivers used since the previous collect. */
  cpuMs: number;
  closedEarly: number;
  complete: number;
  measured: number;
  fanout: { sse: Uint32Array; ws: Uint32Array };
  e2e: { sse: Uint32Array; ws: Uint32Array };
}

/** What a sender reports at the end of its phase. */
interface SenderResult {
  sent: number;
  ok: number;
  failed: number;
  seconds: number;
  cpuMs: number;
}

/**
 * Connects the subscribers once, split evenly over `serviceUrls` (one receivers process per URL), then runs one phase
 * per rate in FANOUT_RATES with one sender per URL at an even share of the rate. Every subscriber, whichever replica it
 * is on, must get every alert.
 */
async function measureFanout(label: string, serviceUrls: string[]): Promise<void> {
  const share = serviceUrls.length;
  const receivers = serviceUrls.map((baseUrl) =>
    spawn({ role: 'receivers', baseUrl, sse: SSE_SUBSCRIBERS / share, ws: WS_SUBSCRIBERS / share }),
  );
  const askAll = <T>(message: string) =>
    Promise.all(
      receivers.map((child) => {
        const answer = result<T>(child);
        child.send(message);
        return answer;
      }),
    );
  const connectStart = nowMs();
  await Promise.all(receivers.map((child) => result(child)));
  console.log(
    `fan-out, ${label}: ${SSE_SUBSCRIBERS} SSE + ${WS_SUBSCRIBERS} WebSocket subscribers` +
      `${share > 1 ? ` (split over ${share} replicas)` : ''} connected in ` +
      `${((nowMs() - connectStart) / 1000).toFixed(1)} s; every event timed on 1 in ${SAMPLE_EVERY} of them ` +
      `(spread evenly), every byte counted on all`,
  );
  try {
    for (const rate of FANOUT_RATES) {
      const waitBefore = await runQueueWaitMs();
      const busyBefore = performance.eventLoopUtilization();
      const cpuBefore = process.cpuUsage();
      const loopDelay = monitorEventLoopDelay({ resolution: 5 });
      loopDelay.enable();
      const start = nowMs();
      const senders = await Promise.all(
        serviceUrls.map((serviceUrl) =>
          result<SenderResult>(
            spawn({
              role: 'sender',
              url: `${serviceUrl}/api/v1/actions/execute`,
              healthUrl: `${serviceUrl}/api/v1/health`,
              rate: rate / share,
              durationMs: FANOUT_MS,
            }),
          ),
        ),
      );
      const sender: SenderResult = {
        sent: senders.reduce((n, r) => n + r.sent, 0),
        ok: senders.reduce((n, r) => n + r.ok, 0),
        failed: senders.reduce((n, r) => n + r.failed, 0),
        seconds: Math.max(...senders.map((r) => r.seconds)),
        cpuMs: senders.reduce((n, r) => n + r.cpuMs, 0),
      };
      const busy = performance.eventLoopUtilization(busyBefore).utilization;
      const cpu = process.cpuUsage(cpuBefore);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      const waitedMs = (await runQueueWaitMs()) - waitBefore;
      const phaseMs = nowMs() - start;
      const cpuCores = cpuMs / (nowMs() - start);
      loopDelay.disable();
      // Let the receivers drain what is still in flight (bounded), so that nothing is cut off.
      const drainStart = nowMs();
      for (let i = 0; i < 150; i++) {
        const progress = await askAll<{ received: number; measured: number; complete: number }>('progress');
        const done = progress.every(
          (p) => p.received >= sender.ok * p.measured && p.complete === (SSE_SUBSCRIBERS + WS_SUBSCRIBERS) / share,
        );
        if (done) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const drainSeconds = (nowMs() - drainStart) / 1000;
      const r = mergeReceivers(await askAll<ReceiverResult>('collect'));
      const collectedAt = nowMs();
      const hist = (...counts: Uint32Array[]) => {
        const h = new Histogram();
        for (const c of counts) h.merge(c);
        return h;
      };
      console.log(
        `  at ${rate} alerts/s for ${FANOUT_MS / 1000} s: ${sender.ok}/${sender.sent} alerts answered ` +
          `(achieved ${(sender.sent / sender.seconds).toFixed(0)}/s, ${sender.failed} failed)`,
      );
      for (const kind of ['sse', 'ws'] as const) {
        const f = hist(...r.fanout[kind]);
        const e = hist(...r.e2e[kind]);
        console.log(
          `    ${kind.padEnd(3)} ${r.received[kind]} timed deliveries: publish→receipt p50 ${ms(f.percentile(50))} ` +
            `p99 ${ms(f.percentile(99))} max ${ms(f.percentile(100))}; ` +
            `POST sent→receipt p50 ${ms(e.percentile(50))} p99 ${ms(e.percentile(99))}`,
        );
      }
      console.log(
        `    all: publish→receipt p99 ${ms(hist(...r.fanout.sse, ...r.fanout.ws).percentile(99))} (target < 50 ms); ` +
          `${r.complete}/${SSE_SUBSCRIBERS + WS_SUBSCRIBERS} subscribers got every byte; ${r.closedEarly} closed early; ` +
          `drained ${drainSeconds.toFixed(1)} s after the last alert`,
      );
      console.log(
        `    service: ${cpuCores.toFixed(2)} cores of CPU (${(cpuMs / sender.ok).toFixed(2)} ms per alert incl. its ` +
          `HTTP request, ${((cpuMs * 1000) / (sender.ok * (SSE_SUBSCRIBERS + WS_SUBSCRIBERS))).toFixed(2)} µs per ` +
          `delivery); main thread busy ${(busy * 100).toFixed(0)}% of wall time, loop delay p99 ` +
          `${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms` +
          (Number.isNaN(waitedMs)
            ? ''
            : `; it waited for a free core ${((100 * waitedMs) / phaseMs).toFixed(0)}% of the time (run queue)`),
      );
      console.log(
        `    measuring clients on the same cores: receivers ${(r.cpuMs / (collectedAt - start)).toFixed(2)} cores, ` +
          `sender ${(sender.cpuMs / phaseMs).toFixed(2)} cores`,
      );
    }
  } finally {
    for (const child of receivers) {
      child.send('stop');
      child.kill();
    }
  }
}

/** The results of several receivers processes as one: counts add, histograms are concatenated for merging. */
function mergeReceivers(results: ReceiverResult[]): Omit<ReceiverResult, 'fanout' | 'e2e'> & {
  fanout: { sse: Uint32Array[]; ws: Uint32Array[] };
  e2e: { sse: Uint32Array[]; ws: Uint32Array[] };
} {
  return {
    received: {
      sse: results.reduce((n, r) => n + r.received.sse, 0),
      ws: results.reduce((n, r) => n + r.received.ws, 0),
    },
    cpuMs: results.reduce((n, r) => n + r.cpuMs, 0),
    closedEarly: results.reduce((n, r) => n + r.closedEarly, 0),
    complete: results.reduce((n, r) => n + r.complete, 0),
    measured: results.reduce((n, r) => n + r.measured, 0),
    fanout: { sse: results.map((r) => r.fanout.sse), ws: results.map((r) => r.fanout.ws) },
    e2e: { sse: results.map((r) => r.e2e.sse), ws: results.map((r) => r.e2e.ws) },
  };
}
