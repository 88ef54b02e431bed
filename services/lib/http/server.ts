import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Logger } from '../log/index.js';

/** A listening HTTP server and the way to stop it gracefully. */
export interface RunningServer {
  server: http.Server;
  port: number;
  url: string;
  /** Stops accepting, runs `beforeClose` hooks (close streams), waits for requests up to the grace period. */
  close(): Promise<void>;
}

/** Options of listen(); `beforeClose` hooks end long-lived responses (SSE, WebSocket) so close can finish. */
export interface ListenOptions {
  port: number;
  host: string;
  logger: Logger;
  name: string;
  graceMs?: number;
  beforeClose?: Array<() => Promise<void> | void>;
}

/** Starts `app` on host:port (0 picks a free port). */
export async function listen(app: Koa, options: ListenOptions): Promise<RunningServer> {
  const server = http.createServer(app.callback());
  server.requestTimeout = 0; // uploads of hundreds of MB and SSE streams outlive Node's default 5 min timeout
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  options.logger.info(`${options.name} listening`, { url });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      for (const hook of options.beforeClose ?? []) await hook();
      const timer = setTimeout(() => server.closeAllConnections(), options.graceMs ?? 10_000);
      timer.unref();
      await stopped;
      clearTimeout(timer);
      options.logger.info(`${options.name} stopped`);
    })());
  return { server, port, url, close };
}

/** Calls `shutdown` once on SIGTERM/SIGINT, then exits (1 if shutdown failed). */
export function onShutdownSignal(logger: Logger, shutdown: () => Promise<void>): void {
  let started = false;
  const handler = (signal: string) => {
    if (started) return;
    started = true;
    logger.info('shutting down', { signal });
    shutdown().then(
      () => process.exit(0),
      (err) => {
        logger.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}
