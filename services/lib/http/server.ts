import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Logger } from '../log/index.js';
import { ApiKeys, guardUpgrades, requireApiKeys } from './api-keys.js';
import { setStopSignal } from './request-signal.js';

/** How long a graceful stop may take when no deadline is given. */
const DEFAULT_GRACE_MS = 10_000;

/** When a stop must be over: an absolute time in `Date.now()` milliseconds. */
export interface StopOptions {
  deadline?: number;
}

/** A listening HTTP server and the way to stop it gracefully. */
export interface RunningServer {
  server: http.Server;
  port: number;
  url: string;
  /**
   * Stops accepting, aborts every request signal (in-flight work stops and rolls back), runs `beforeClose` hooks
   * (close streams), then waits until every connection is closed and every handler has returned, or until the
   * deadline (default: the grace period from now), when the remaining connections are closed.
   */
  close(options?: StopOptions): Promise<void>;
}

/** Options of listen(); `beforeClose` hooks end long-lived responses (SSE, WebSocket) so close can finish. */
export interface ListenOptions {
  port: number;
  host: string;
  logger: Logger;
  name: string;
  /** Time a close without a deadline may take (default 10 s). */
  graceMs?: number;
  beforeClose?: Array<() => Promise<void> | void>;
  /**
   * Bearer keys every request but health, metrics and docs must carry, WebSocket upgrades included (the platform's
   * ARGUS_API_KEYS); none or empty: no key is needed.
   */
  apiKeys?: readonly string[];
}

/** Whether `host` is a loopback address or name: only this machine reaches a server listening there. */
const isLoopback = (host: string) => /^(?:127\.\d+\.\d+\.\d+|::1|localhost)$/i.test(host);

/** Starts `app` on host:port (0 picks a free port). */
export async function listen(app: Koa, options: ListenOptions): Promise<RunningServer> {
  const stopping = new AbortController();
  setStopSignal(app, stopping.signal);
  const handle = app.callback();
  // Handlers still running: a handler whose client is gone (socket closed) may still be rolling back.
  let running = 0;
  let onIdle: (() => void) | undefined;
  const handlerDone = () => {
    if (--running === 0) onIdle?.();
  };
  const keys = ApiKeys.of(options.apiKeys);
  requireApiKeys(app, keys);
  if (!keys && !isLoopback(options.host)) {
    options.logger.warn(
      `${options.name} requires no API key on ${options.host}: set ARGUS_API_KEYS unless a proxy in front authenticates`,
    );
  }
  const refused = (req: http.IncomingMessage) =>
    options.logger.http('websocket upgrade refused: no accepted API key', { path: (req.url ?? '').split('?')[0] });
  const server = http.createServer((req, res) => {
    running++;
    const done = () => {
      handlerDone();
      // While stopping, a keep-alive connection is closed once its answer is out instead of idling until its timeout.
      if (stopping.signal.aborted) {
        if (res.writableFinished) server.closeIdleConnections();
        else res.once('finish', () => server.closeIdleConnections());
      }
    };
    // Koa's handleRequest settles once the handler and the error answer are done; it never rejects.
    void handle(req, res).then(done, done);
  });
  guardUpgrades(server, app, refused);
  server.requestTimeout = 0; // uploads of hundreds of MB and SSE streams outlive Node's default 5 min timeout
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  options.logger.info(`${options.name} listening`, { url });
  let closing: Promise<void> | undefined;
  const close = (stop: StopOptions = {}) =>
    (closing ??= (async () => {
      // Armed before anything else, so hooks and handlers share one deadline.
      const deadline = stop.deadline ?? Date.now() + (options.graceMs ?? DEFAULT_GRACE_MS);
      const socketsClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      const handlersDone = new Promise<void>((resolve) => {
        onIdle = resolve;
        if (running === 0) resolve();
      });
      let timer: NodeJS.Timeout | undefined;
      const deadlinePassed = new Promise<'deadline'>((resolve) => {
        timer = setTimeout(() => resolve('deadline'), Math.max(0, deadline - Date.now()));
      });
      server.closeIdleConnections();
      stopping.abort();
      const drained = (async () => {
        for (const hook of options.beforeClose ?? []) await hook();
        await Promise.all([socketsClosed, handlersDone]);
      })();
      // A hook failing after the deadline has nobody to report to.
      drained.catch(() => undefined);
      const outcome = await Promise.race([drained, deadlinePassed]).finally(() => clearTimeout(timer));
      if (outcome === 'deadline') {
        server.closeAllConnections();
        options.logger.warn(`${options.name} stop deadline passed`, { handlersRunning: running });
      }
      options.logger.info(`${options.name} stopped`);
    })());
  return { server, port, url, close };
}

/**
 * Calls `shutdown` once on SIGTERM/SIGINT and exits: 0 when it finished, 1 when it failed or when the grace ran out
 * first. The grace starts at the first signal; `shutdown` is handed the deadline for draining requests, which leaves a
 * reserve (a quarter of the grace, at most 3 s) to release resources before the process must be gone. Later signals
 * are logged and ignored: `npm run` forwards a second one and people press Ctrl-C twice, and dying at once would skip
 * the clean-up (a leader's Lease would stay held for its whole duration); the grace still ends the process.
 */
export function onShutdownSignal(
  logger: Logger,
  shutdown: (stop: Required<StopOptions>) => Promise<void>,
  graceMs: number = DEFAULT_GRACE_MS,
): void {
  let started = false;
  const handler = (signal: string) => {
    if (started) {
      logger.info('already shutting down: signal ignored', { signal });
      return;
    }
    started = true;
    const reserve = Math.min(3000, graceMs / 4);
    logger.info('shutting down', { signal, grace_ms: graceMs });
    const forced = setTimeout(() => {
      logger.error('shutdown grace ran out: exiting now', { grace_ms: graceMs });
      process.exit(1);
    }, graceMs);
    forced.unref();
    shutdown({ deadline: Date.now() + graceMs - reserve }).then(
      () => process.exit(0),
      (err) => {
        logger.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  // `on`, not `once`: with no listener left, Node's default action for the next signal kills the process.
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
