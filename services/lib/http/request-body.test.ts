import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import Joi from 'joi';
import { gzipBomb, nestedJson } from '../../../test/support/hostile-bodies.js';
import { createLogger } from '../log/index.js';
import { DEFAULT_DISCARD_LIMIT_BYTES, DEFAULT_JSON_MAX_DEPTH } from './body-limits.js';
import { exceedsJsonDepth } from './json-depth.js';
import {
  createHttpApp,
  defineRoute,
  HttpError,
  listen,
  statusMessageStyle,
  type HttpAppOptions,
  type RunningServer,
} from './index.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });
const MIB = 1024 * 1024;

const routes = [
  defineRoute({
    method: 'post',
    path: '/echo',
    summary: 'Echoes a JSON body',
    request: { body: Joi.object({ name: Joi.string().required() }).unknown(true) },
    responses: { 200: { description: 'the body', schema: Joi.object().unknown(true) } },
    handler: (ctx) => {
      ctx.body = ctx.state.body;
    },
  }),
  defineRoute({
    method: 'post',
    path: '/upload',
    summary: 'Refuses every upload before reading it',
    request: { multipart: Joi.object({ file: Joi.any() }) },
    responses: { 400: { description: 'always' } },
    handler: () => {
      throw new HttpError(400, 'Unsupported media type');
    },
  }),
];

/** A kit app with the routes above, listening on loopback; `options` add to or override the defaults. */
const serve = (options: Partial<HttpAppOptions> = {}) =>
  listen(
    createHttpApp({
      info: { title: 'Test API', version: '1.0.0' },
      service: 'test',
      logger,
      errors: statusMessageStyle('internal'),
      routes,
      ...options,
    }).app,
    { port: 0, host: '127.0.0.1', logger, name: 'test' },
  );

describe('JSON request bodies', () => {
  let server: RunningServer;
  beforeAll(async () => (server = await serve({ jsonLimit: '4mb' })));
  afterAll(() => server.close());

  const post = (body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: new Uint8Array(Buffer.from(body)),
    });

  const expectError = async (res: Response, status: number, message: RegExp) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toEqual({ status: 'error', message: expect.stringMatching(message) });
  };

  it('decodes gzip, deflate and br bodies', async () => {
    const json = JSON.stringify({ name: 'compressed' });
    for (const [coding, bytes] of [
      ['gzip', zlib.gzipSync(json)],
      ['deflate', zlib.deflateSync(json)],
      ['br', zlib.brotliCompressSync(json)],
    ] as const) {
      const res = await post(bytes, { 'content-encoding': coding });
      expect([coding, res.status]).toEqual([coding, 200]);
      expect(await res.json()).toEqual({ name: 'compressed' });
    }
  });

  it('answers 400 for a body that does not decode, 415 for an unknown coding', async () => {
    for (const coding of ['gzip', 'deflate', 'br']) {
      await expectError(await post('{"name":"x"}', { 'content-encoding': coding }), 400, /could not be decoded/);
    }
    await expectError(await post('{"name":"x"}', { 'content-encoding': 'compress' }), 415, /Content-Encoding/);
  });

  it('holds the limit to the decoded size: a 1 GiB gzip bomb is a 413 and inflates no further than the limit', async () => {
    const bomb = gzipBomb();
    expect(bomb.length).toBeLessThan(2 * MIB);
    const before = process.memoryUsage();
    let peak = before.rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 1);
    try {
      await expectError(
        await post(bomb, { 'content-encoding': 'gzip' }),
        413,
        /larger than 4194304 bytes once decoded/,
      );
    } finally {
      clearInterval(sampler);
    }
    // Inflating the whole bomb would hold 1 GiB; stopping at the 4 MiB limit holds a few MiB.
    expect(peak - before.rss).toBeLessThan(256 * MIB);
  });

  it('refuses bodies nested deeper than the limit before parsing them', async () => {
    expect((await post(`{"name":"x","m":${nestedJson(DEFAULT_JSON_MAX_DEPTH - 1)}}`)).status).toBe(200);
    await expectError(
      await post(`{"name":"x","m":${nestedJson(DEFAULT_JSON_MAX_DEPTH)}}`),
      400,
      /deeper than 32 levels/,
    );
    await expectError(await post(`{"name":"x","m":${nestedJson(10_000)}}`), 400, /deeper than 32 levels/);
    await expectError(await post(`{"name":"x","m":${'['.repeat(100_000)}`), 400, /deeper than 32 levels/);
  });

  it('counts brackets outside strings only, escapes included', () => {
    expect(exceedsJsonDepth('{"a":"[[[[{{{{"}', 2)).toBe(false);
    expect(exceedsJsonDepth('{"a":"\\"[[[[","b":[[]]}', 3)).toBe(false);
    expect(exceedsJsonDepth('{"a":"\\\\","b":[[[]]]}', 3)).toBe(true);
    expect(exceedsJsonDepth('{"unterminated', 0)).toBe(true);
  });

  it('states the limits in the OpenAPI description', async () => {
    const doc = await (await fetch(`${server.url}/openapi.json`)).json();
    expect(doc.info.description).toContain('at most 4194304 bytes (4 MiB) as sent and once decoded');
    expect(doc.info.description).toContain('at most 32 levels deep');
    expect(doc.info.description).toContain('up to 16 MiB of it is read and dropped first');
  });

  it('refuses other media types and charsets (415), invalid UTF-8, scalars and prototype keys (400)', async () => {
    await expectError(await post('{"name":"x"}', { 'content-type': 'text/plain' }), 415, /must be JSON/);
    await expectError(await post('{"name":"x"}', { 'content-type': 'application/json; charset=latin1' }), 415, /UTF-8/);
    await expectError(await post(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])), 400, /UTF-8/);
    await expectError(await post('"just a string"'), 400, /Invalid JSON/);
    await expectError(await post('{"name":"x","__proto__":{"admin":true}}'), 400, /Invalid JSON/);
    await expectError(await post('{"name":'), 400, /Invalid JSON/);
    await expectError(await post('x'.repeat(5 * MIB)), 413, /larger than 4194304 bytes/);
  });
});

describe('errors outside the routes', () => {
  let server: RunningServer;
  beforeAll(async () => (server = await serve({ basePath: '/v1/test' })));
  afterAll(() => server.close());

  it('answers 405 with Allow, 404 and 501 in the service style, never text/plain', async () => {
    const wrongMethod = await fetch(`${server.url}/v1/test/echo`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    expect(await wrongMethod.json()).toEqual({ status: 'error', message: 'Method Not Allowed' });
    const unknown = await fetch(`${server.url}/v1/test/nowhere`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ status: 'error', message: 'Not Found' });
    const notImplemented = await fetch(`${server.url}/v1/test/echo`, { method: 'PROPFIND' });
    expect(notImplemented.status).toBe(501);
    expect(await notImplemented.json()).toEqual({ status: 'error', message: 'Not Implemented' });
  });
});

/**
 * Sends a request of `bodyBytes` bytes over a raw socket, writing the whole body before reading anything (as a simple
 * client does), and resolves with everything the server sent; rejects when writing fails (a reset).
 */
function sendWholeBodyThenRead(url: string, path: string, bodyBytes: number): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.pause();
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('end', () => {
      socket.destroy();
      resolve(Buffer.concat(received).toString());
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=x\r\n` +
        `Content-Length: ${bodyBytes}\r\n\r\n`,
    );
    const piece = Buffer.alloc(256 * 1024, 0x61);
    let left = bodyBytes;
    const writeMore = () => {
      while (left > 0) {
        const part = piece.subarray(0, Math.min(piece.length, left));
        left -= part.length;
        if (!socket.write(part)) {
          socket.once('drain', writeMore);
          return;
        }
      }
      socket.resume();
    };
    writeMore();
  });
}

describe('early rejection of a body still being sent', () => {
  let server: RunningServer;
  beforeAll(async () => (server = await serve()));
  afterAll(() => server.close());

  const form = (bytes: number) => {
    const body = new FormData();
    body.append('file', new Blob([new Uint8Array(bytes)]), 'clip.mkv');
    return body;
  };

  it('reads a body within the discard limit to its end, answers, and keeps the connection', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    const send = () =>
      new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
        const req = http.request(`${server.url}/upload`, {
          method: 'POST',
          agent,
          headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': 8 * MIB },
        });
        req.on('socket', (socket) => sockets.add(socket));
        req.on('response', (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }));
        });
        req.on('error', reject);
        req.end(Buffer.alloc(8 * MIB, 0x61));
      });
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await send();
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body)).toEqual({ status: 'error', message: 'Unsupported media type' });
        expect(answer.connection).toBe('keep-alive');
      }
      expect(sockets.size).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('answers fetch, never a reset, for bodies past the discard limit (5 tries)', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${server.url}/upload`, { method: 'POST', body: form(3 * DEFAULT_DISCARD_LIMIT_BYTES) });
      expect(res.status).toBe(400);
      expect(res.headers.get('connection')).toBe('close');
      expect(await res.json()).toEqual({ status: 'error', message: 'Unsupported media type' });
    }
  });

  it('lets a client that reads only after sending everything see the answer', async () => {
    const answer = await sendWholeBodyThenRead(server.url, '/upload', 2 * DEFAULT_DISCARD_LIMIT_BYTES + MIB);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer).toContain('{"status":"error","message":"Unsupported media type"}');
  });
});
