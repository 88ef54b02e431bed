import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { createLogger } from '../log/index.js';
import { createHttpApp, defineRoute, listen, statusMessageStyle, type RunningServer } from './index.js';

/** Resolves with the first JSON log line written to `stream` whose message is `message`. */
function nextLine(stream: PassThrough, message: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      for (const line of text.split('\n').filter(Boolean)) {
        const parsed = JSON.parse(line);
        if (parsed.message !== message) continue;
        stream.off('data', onData);
        resolve(parsed);
        return;
      }
    };
    stream.on('data', onData);
  });
}

/** GETs `url` and resolves with the status, the bytes received and how the body ended. */
function get(url: string, readBytes = Infinity) {
  return new Promise<{ status: number; length: number; received: number; ended: 'complete' | 'broken' }>(
    (resolve, reject) => {
      const req = http.get(url, (res) => {
        let received = 0;
        const done = (ended: 'complete' | 'broken') =>
          resolve({ status: res.statusCode!, length: Number(res.headers['content-length']), received, ended });
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          // A client that goes away after reading part of the body.
          if (received >= readBytes) {
            req.destroy();
            done('broken');
          }
        });
        res.on('end', () => done('complete'));
        res.on('error', () => done('broken'));
        res.on('aborted', () => done('broken'));
      });
      req.on('error', reject);
    },
  );
}

describe('failures after the response began (streamed bodies)', () => {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const logger = createLogger({ service: 'test', level: 'debug', json: true, streams: { stdout, stderr } });
  let server: RunningServer;
  let metrics: ReturnType<typeof createHttpApp>['metrics'];

  beforeAll(async () => {
    const created = createHttpApp({
      info: { title: 'stream errors', version: '1' },
      service: 'stream-errors-test',
      logger: logger,
      errors: statusMessageStyle('internal'),
      routes: [
        defineRoute({
          method: 'get',
          path: '/breaks',
          summary: 'A body that breaks after 64 KiB of 1 MiB',
          responses: { 200: { description: 'bytes', contentType: 'application/octet-stream' } },
          handler: async (ctx) => {
            let sent = 0;
            ctx.body = new Readable({
              read() {
                if (sent >= 64 * 1024) return void this.destroy(new Error('storage connection lost'));
                sent += 16 * 1024;
                this.push(Buffer.alloc(16 * 1024, 1));
              },
            });
            ctx.length = 1024 * 1024;
          },
        }),
        defineRoute({
          method: 'post',
          path: '/reads',
          summary: 'Reads the whole request body, then answers',
          responses: { 200: { description: 'bytes read', contentType: 'application/octet-stream' } },
          handler: async (ctx) => {
            let read = 0;
            for await (const chunk of ctx.req) read += (chunk as Buffer).length;
            ctx.body = { read };
          },
        }),
        defineRoute({
          method: 'get',
          path: '/endless',
          summary: 'A body that never ends',
          responses: { 200: { description: 'bytes', contentType: 'application/octet-stream' } },
          handler: async (ctx) => {
            ctx.body = new Readable({
              read() {
                this.push(Buffer.alloc(16 * 1024, 2));
              },
            });
          },
        }),
      ],
    });
    metrics = created.metrics;
    server = await listen(created.app, { port: 0, host: '127.0.0.1', logger: logger, name: 'stream-errors' });
  });
  afterAll(() => server?.close());

  const failures = async () =>
    (await metrics.registry.getSingleMetric('http_response_stream_errors_total')!.get()).values;

  it('logs a body stream that breaks mid-body with the request id, counts it and cuts the response', async () => {
    const logged = nextLine(stderr, 'response failed after it began');
    const res = await get(`${server.url}/breaks`);
    expect(res.status).toBe(200);
    // The client sees the body end early instead of a response that looks complete.
    expect(res.ended).toBe('broken');
    expect(res.received).toBeLessThan(res.length);
    const line = await logged;
    expect(line).toMatchObject({ level: 'error', method: 'GET', path: '/breaks', error: 'storage connection lost' });
    expect(line.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await failures()).toEqual([{ value: 1, labels: { route: '/breaks' } }]);
  });

  it('does not count a client that leaves mid-body (debug line only)', async () => {
    const logged = nextLine(stdout, 'client left before the response was complete');
    const res = await get(`${server.url}/endless`, 256 * 1024);
    expect(res.ended).toBe('broken');
    expect(await logged).toMatchObject({ level: 'debug', path: '/endless' });
    expect(await failures()).toEqual([{ value: 1, labels: { route: '/breaks' } }]);
  });

  it('does not count or log as an error a client that closes its connection mid-request-body', async () => {
    const errors: string[] = [];
    stderr.on('data', (chunk: Buffer) => errors.push(chunk.toString()));
    const logged = nextLine(stdout, 'client left before the response was complete');
    const left = nextLine(stdout, 'client left before the answer');
    await new Promise<void>((resolve) => {
      const req = http.request(`${server.url}/reads`, { method: 'POST', headers: { 'content-length': '1000' } });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write(Buffer.alloc(500), () => req.destroy());
    });
    expect(await logged).toMatchObject({ level: 'debug', path: '/reads' });
    expect(await left).toMatchObject({ level: 'info' });
    expect(await failures()).toEqual([{ value: 1, labels: { route: '/breaks' } }]);
    expect(errors).toEqual([]);
  });
});
