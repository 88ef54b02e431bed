import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../log/index.js';
import {
  createHttpApp,
  defineRoute,
  listen,
  requestSignal,
  ServerStoppingError,
  statusMessageStyle,
  type RunningServer,
} from './index.js';

function memoryLogger() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = { out: '', err: '' };
  stdout.on('data', (chunk) => (text.out += chunk));
  stderr.on('data', (chunk) => (text.err += chunk));
  return { logger: createLogger({ service: 'test', level: 'info', json: true, streams: { stdout, stderr } }), text };
}

/** An app whose one route waits for its request signal, then rolls back (real file I/O) and records the order. */
function slowApp(order: string[], started: () => void, aborted: () => void = () => undefined) {
  return createHttpApp({
    info: { title: 'stop test', version: '1' },
    service: 'stop-test',
    logger: memoryLogger().logger,
    errors: statusMessageStyle('internal'),
    routes: [
      defineRoute({
        method: 'get',
        path: '/work',
        summary: 'Work until the request signal aborts, then roll back',
        responses: { 200: { description: 'never' } },
        handler: async (ctx) => {
          const signal = requestSignal(ctx);
          started();
          const reason = await new Promise((resolve) =>
            signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
          );
          order.push(reason instanceof ServerStoppingError ? 'aborted: server stopping' : 'aborted: client gone');
          aborted();
          const dir = await mkdtemp(path.join(os.tmpdir(), 'rollback-'));
          await writeFile(path.join(dir, 'undo.log'), 'rolling back');
          await rm(dir, { recursive: true });
          order.push('rolled back');
          throw new Error('stopped');
        },
      }),
    ],
  });
}

/** Opens a connection and sends GET /work; resolves the socket once the handler has started. */
async function startWork(server: RunningServer, handlerStarted: Promise<void>): Promise<net.Socket> {
  const socket = net.connect(server.port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write('GET /work HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await handlerStarted;
  return socket;
}

describe('listen: stopping', () => {
  it('aborts the request signals of running handlers and resolves only once their rollbacks are done', async () => {
    const order: string[] = [];
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    const { app } = slowApp(order, started);
    const server = await listen(app, { port: 0, host: '127.0.0.1', logger: memoryLogger().logger, name: 'stop' });
    const socket = await startWork(server, handlerStarted);
    await server.close();
    order.push('closed');
    expect(order).toEqual(['aborted: server stopping', 'rolled back', 'closed']);
    socket.destroy();
  });

  it('waits for a handler whose client already left (its socket is gone, its rollback is not)', async () => {
    const order: string[] = [];
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    let aborted!: () => void;
    const handlerAborted = new Promise<void>((resolve) => (aborted = resolve));
    const { app } = slowApp(order, started, aborted);
    const server = await listen(app, { port: 0, host: '127.0.0.1', logger: memoryLogger().logger, name: 'stop' });
    const socket = await startWork(server, handlerStarted);
    socket.destroy();
    // The server has seen the client go (the handler's signal fired); its rollback is under way.
    await handlerAborted;
    await server.close();
    order.push('closed');
    expect(order).toEqual(['aborted: client gone', 'rolled back', 'closed']);
  });

  it('keeps one deadline from the start of close for hooks and requests, then closes what is left', async () => {
    const { logger, text } = memoryLogger();
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    // A handler that ignores its signal, and a hook that never finishes: only the deadline ends the stop.
    const { app } = createHttpApp({
      info: { title: 'stuck', version: '1' },
      service: 'stuck-test',
      logger,
      errors: statusMessageStyle('internal'),
      routes: [
        defineRoute({
          method: 'get',
          path: '/work',
          summary: 'Never returns',
          responses: { 200: { description: 'never' } },
          handler: async () => {
            started();
            await new Promise(() => undefined);
          },
        }),
      ],
    });
    const server = await listen(app, {
      port: 0,
      host: '127.0.0.1',
      logger,
      name: 'stuck',
      beforeClose: [() => new Promise<void>(() => undefined)],
    });
    const socket = await startWork(server, handlerStarted);
    const socketClosed = new Promise((resolve) => socket.once('close', resolve));
    await server.close({ deadline: Date.now() + 300 });
    // The connection the handler held was closed at the deadline.
    await socketClosed;
    expect(text.err).toMatch(/stuck stop deadline passed/);
    expect(text.err).toMatch(/"handlersRunning":1/);
  });
});

/** The child of test/support/shutdown-on-signal.ts: its JSON log lines as they come, and its exit. */
function signalChild(mode: 'stdin' | 'never') {
  const script = fileURLToPath(new URL('../../../test/support/shutdown-on-signal.ts', import.meta.url));
  const { NODE_OPTIONS: _jest, ...env } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', script, mode], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const waiting: { match: (r: Record<string, unknown>) => boolean; resolve: () => void }[] = [];
  let pending = '';
  const onData = (chunk: string) => {
    const parts = (pending + chunk).split('\n');
    pending = parts.pop()!;
    for (const line of parts) {
      const record = JSON.parse(line) as Record<string, unknown>;
      lines.push(record);
      for (const w of waiting.filter((w) => w.match(record))) w.resolve();
    }
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.stderr.setEncoding('utf8').on('data', onData);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  /** Resolves once a line with this message (and signal, when given) was logged. */
  const logged = (message: string, signal?: string) => {
    const match = (r: Record<string, unknown>) => r.message === message && (!signal || r.signal === signal);
    if (lines.some(match)) return Promise.resolve();
    return Promise.race([
      new Promise<void>((resolve) => waiting.push({ match, resolve })),
      exited.then(({ code, signal: killedBy }) => {
        throw new Error(`exited (${code ?? killedBy}) before logging "${message}": ${JSON.stringify(lines)}`);
      }),
    ]);
  };
  return { child, lines, exited, logged };
}

describe('onShutdownSignal', () => {
  it('shuts down gracefully once on the first SIGTERM, logging and ignoring a second one (exit 0)', async () => {
    const { child, lines, exited, logged } = signalChild('stdin');
    await logged('ready');
    child.kill('SIGTERM');
    await logged('shutdown started');
    child.kill('SIGTERM');
    await logged('already shutting down: signal ignored', 'SIGTERM');
    child.kill('SIGINT');
    await logged('already shutting down: signal ignored', 'SIGINT');
    // The shutdown goes on: it ends when the test lets it.
    child.stdin.end('done\n');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(lines.map((l) => [l.message, l.signal])).toEqual([
      ['ready', undefined],
      ['shutting down', 'SIGTERM'],
      ['shutdown started', undefined],
      ['already shutting down: signal ignored', 'SIGTERM'],
      ['already shutting down: signal ignored', 'SIGINT'],
      ['shutdown finished', undefined],
    ]);
  });

  it('still ends a shutdown that does not finish at the grace, a second signal notwithstanding (exit 1)', async () => {
    const { child, lines, exited, logged } = signalChild('never');
    await logged('ready');
    child.kill('SIGINT');
    await logged('shutdown started');
    child.kill('SIGINT');
    expect(await exited).toEqual({ code: 1, signal: null });
    expect(lines.map((l) => l.message)).toEqual([
      'ready',
      'shutting down',
      'shutdown started',
      'already shutting down: signal ignored',
      'shutdown grace ran out: exiting now',
    ]);
  });
});
