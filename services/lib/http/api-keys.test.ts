import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import net from 'node:net';
import Joi from 'joi';
import { WebSocket, WebSocketServer } from 'ws';
import { captureLogs, logsWritten } from '../../../test/support/logs.js';
import { ApiKeys } from './api-keys.js';
import { createHttpApp, defineRoute, detailStyle, formatSseMessage, listen, openSseResponse } from './index.js';
import type { RunningServer } from './index.js';

const KEY = 'first-key-0123456789abcdef';
const SECOND = 'second-key-0123456789abcdef';

describe('ApiKeys', () => {
  const keys = ApiKeys.of([KEY, SECOND])!;

  it('accepts `Bearer <key>` for any of its keys, the scheme in any case', () => {
    expect(keys.accepts(`Bearer ${KEY}`)).toBe(true);
    expect(keys.accepts(`bearer ${SECOND}`)).toBe(true);
    expect(keys.accepts(`BEARER  ${KEY} `)).toBe(true);
  });

  it('refuses no header, another scheme, a wrong, shorter, longer or 10 kB token, and a bare scheme', () => {
    for (const header of [
      undefined,
      '',
      `Basic ${Buffer.from(`user:${KEY}`).toString('base64')}`,
      KEY,
      `Bearer ${KEY.slice(0, -1)}`,
      `Bearer ${KEY}x`,
      `Bearer ${'x'.repeat(10 * 1024)}`,
      'Bearer',
      'Bearer ',
      `Bearer ${KEY} ${KEY}`,
    ]) {
      expect(keys.accepts(header)).toBe(false);
    }
  });

  it('is none without keys, and its 401 challenges as RFC 6750 says, naming no key', () => {
    expect(ApiKeys.of([])).toBeUndefined();
    expect(ApiKeys.of(undefined)).toBeUndefined();
    const none = keys.refusal(undefined);
    expect(none.status).toBe(401);
    expect(none.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="argus"' });
    const wrong = keys.refusal('Bearer not-the-key');
    expect(wrong.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="argus", error="invalid_token"' });
    expect(`${none.message} ${wrong.message}`).not.toContain(KEY);
  });
});

/** A small app under `/api`: a JSON route, an SSE route, health, and a WebSocket endpoint on `/api/ws`. */
function keyedApp(logger: ReturnType<typeof captureLogs>['logger']) {
  return createHttpApp({
    info: { title: 'keys test', version: '1' },
    service: 'keys-test',
    logger,
    errors: detailStyle(),
    basePath: '/api',
    routes: [
      defineRoute({
        method: 'get',
        path: '/things',
        summary: 'Things',
        responses: { 200: { description: 'ok', schema: Joi.object({ things: Joi.array().required() }) } },
        handler: (ctx) => {
          ctx.body = { things: [] };
        },
      }),
      defineRoute({
        method: 'get',
        path: '/events',
        summary: 'One event, then the end',
        responses: { 200: { description: 'events', contentType: 'text/event-stream' } },
        handler: (ctx) => {
          const res = openSseResponse(ctx);
          res.end(formatSseMessage({ event: 'hello', data: '{}' }));
        },
      }),
      defineRoute({
        method: 'get',
        path: '/health',
        summary: 'Health',
        responses: { 200: { description: 'ok', schema: Joi.object({ status: Joi.string().required() }) } },
        handler: (ctx) => {
          ctx.body = { status: 'ok' };
        },
      }),
    ],
  });
}

/** Opens a WebSocket to `url` with `headers`; resolves with the answer: 101 as 'open', else the refusal's status. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('error', reject);
  });
}

describe('an app listened to with API keys', () => {
  const logs = captureLogs({ level: 'http' });
  let server: RunningServer;
  let api: string;
  const wss = new WebSocketServer({ noServer: true });

  beforeAll(async () => {
    server = await listen(keyedApp(logs.logger).app, {
      port: 0,
      host: '127.0.0.1',
      logger: logs.logger,
      name: 'keys-test',
      apiKeys: [KEY, SECOND],
    });
    api = `${server.url}/api`;
    // A service's own WebSocket endpoint, attached as services do it: the kit guards it without its help.
    server.server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => ws.close()));
  });
  afterAll(async () => {
    wss.close();
    await server?.close();
  });

  it('answers an API request without a key 401 in the error style with a Bearer challenge', async () => {
    const res = await fetch(`${api}/things`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="argus"');
    expect(await res.json()).toEqual({ detail: 'An API key is required: send it as Authorization: Bearer <key>' });
  });

  it('answers a wrong key, another scheme and unknown paths 401, and serves the right key', async () => {
    const wrong = await fetch(`${api}/things`, { headers: { authorization: 'Bearer wrong-key-0123456789abcdef' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="argus", error="invalid_token"');
    expect(await wrong.json()).toEqual({ detail: 'The API key is not valid' });
    const basic = await fetch(`${api}/things`, { headers: { authorization: `Basic ${KEY}` } });
    expect(basic.status).toBe(401);
    expect((await fetch(`${api}/nowhere`)).status).toBe(401);
    for (const key of [KEY, SECOND]) {
      const res = await fetch(`${api}/things`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ things: [] });
    }
  });

  it('keeps health, metrics and the docs open', async () => {
    for (const path of ['/api/health', '/api/health/', '/metrics', '/openapi.json', '/docs', '/redoc']) {
      expect([path, (await fetch(`${server.url}${path}`)).status]).toEqual([path, 200]);
    }
  });

  it('guards a Server-Sent Events stream like any route', async () => {
    expect((await fetch(`${api}/events`)).status).toBe(401);
    const res = await fetch(`${api}/events`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await res.text()).toContain('event: hello');
  });

  it('refuses a WebSocket upgrade without an accepted key 401 in the error style, and upgrades with one', async () => {
    const refused = await upgrade(`${api.replace('http', 'ws')}/ws`);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toEqual({
      detail: 'An API key is required: send it as Authorization: Bearer <key>',
    });
    expect((await upgrade(`${api.replace('http', 'ws')}/ws`, { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await upgrade(`${api.replace('http', 'ws')}/ws`, { authorization: `Bearer ${KEY}` })).status).toBe(101);
  });

  it('answers a 10 kB token 401 and keeps serving', async () => {
    const res = await fetch(`${api}/things`, { headers: { authorization: `Bearer ${'k'.repeat(10 * 1024)}` } });
    expect(res.status).toBe(401);
    expect((await fetch(`${api}/health`)).status).toBe(200);
  });

  it('never writes a key or a presented token to its logs', async () => {
    await fetch(`${api}/things`, { headers: { authorization: 'Bearer presented-token-0123456789' } });
    await logsWritten();
    expect(logs.text.out).toContain('"status":401');
    expect(`${logs.text.out}${logs.text.err}`).not.toMatch(/first-key|second-key|presented-token/);
  });
});

describe('an app listened to without keys', () => {
  it('warns when told to listen beyond loopback, and not on loopback', async () => {
    const logs = captureLogs();
    // 192.0.2.1 (TEST-NET-1) is no address of this machine: the bind fails and nothing leaves loopback.
    const beyond = listen(keyedApp(logs.logger).app, { port: 0, host: '192.0.2.1', logger: logs.logger, name: 'wide' });
    await beyond.then((server) => server.close()).catch(() => undefined);
    const local = await listen(keyedApp(logs.logger).app, {
      port: 0,
      host: '127.0.0.1',
      logger: logs.logger,
      name: 'local',
    });
    await local.close();
    await logsWritten();
    const warnings = logs.lines('err').map((line: { message: string }) => line.message);
    expect(warnings.filter((message) => /requires no API key/.test(message))).toEqual([
      'wide requires no API key on 192.0.2.1: set ARGUS_API_KEYS unless a proxy in front authenticates',
    ]);
  });

  it('serves every request without a key, as before', async () => {
    const logs = captureLogs();
    const server = await listen(keyedApp(logs.logger).app, {
      port: 0,
      host: '127.0.0.1',
      logger: logs.logger,
      name: 'open-test',
    });
    try {
      expect((await fetch(`${server.url}/api/things`)).status).toBe(200);
      const res = await new Promise<http.IncomingMessage>((resolve) =>
        http.get(`${server.url}/api/things`, { headers: { authorization: 'Basic anything' } }, resolve),
      );
      res.resume();
      expect(res.statusCode).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('needs no key once listened to again without keys (a restart with ARGUS_API_KEYS removed)', async () => {
    const logs = captureLogs();
    const { app } = keyedApp(logs.logger);
    const options = { port: 0, host: '127.0.0.1', logger: logs.logger, name: 'relisten' };
    const keyed = await listen(app, { ...options, apiKeys: [KEY] });
    expect((await fetch(`${keyed.url}/api/things`)).status).toBe(401);
    await keyed.close();
    const open = await listen(app, options);
    try {
      expect((await fetch(`${open.url}/api/things`)).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});

describe('a refused WebSocket upgrade', () => {
  it('closes its socket once the 401 is out: a client keeping its side open holds no graceful stop', async () => {
    const logs = captureLogs();
    const server = await listen(keyedApp(logs.logger).app, {
      port: 0,
      host: '127.0.0.1',
      logger: logs.logger,
      name: 'half-open-test',
      apiKeys: [KEY],
    });
    server.server.on('upgrade', (_req, socket) => socket.destroy());
    // allowHalfOpen: the client reads the answer to its end and never closes its own side.
    const client = net.connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
    try {
      let answer = '';
      client.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
      const answered = new Promise((resolve) => client.once('end', resolve));
      client.write('GET /api/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
      await answered;
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      // A deadline no run reaches: the stop ends when the sockets are closed, or the warning below tells it did not.
      await server.close({ deadline: Date.now() + 60_000 });
      await logsWritten();
      expect(logs.text.err).not.toContain('stop deadline passed');
    } finally {
      client.destroy();
    }
  });
});

describe('an app at the root path with API keys', () => {
  it('guards an API route whose path begins like an operations path (/metrics…, /docs…)', async () => {
    const logs = captureLogs();
    const { app } = createHttpApp({
      info: { title: 'root test', version: '1' },
      service: 'root-test',
      logger: logs.logger,
      errors: detailStyle(),
      basePath: '',
      routes: [
        defineRoute({
          method: 'get',
          path: '/metrics-summary',
          summary: 'API data under a name that begins like /metrics',
          responses: { 200: { description: 'ok', schema: Joi.object({ secret: Joi.string().required() }) } },
          handler: (ctx) => {
            ctx.body = { secret: 'api data' };
          },
        }),
      ],
    });
    const server = await listen(app, { port: 0, host: '127.0.0.1', logger: logs.logger, name: 'root', apiKeys: [KEY] });
    try {
      const open = await fetch(`${server.url}/metrics-summary`);
      expect(open.status).toBe(401);
      const keyed = await fetch(`${server.url}/metrics-summary`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(await keyed.json()).toEqual({ secret: 'api data' });
      expect((await fetch(`${server.url}/metrics`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
