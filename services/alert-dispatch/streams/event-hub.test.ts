import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { createHttpApp, detailStyle, listen, type RunningServer } from '../../lib/http/index.js';
import { createLogger } from '../../lib/log/index.js';
import { EventHub, type EventHubOptions } from './event-hub.js';

const logger = createLogger({ service: 'event-hub-test', level: 'error', json: true });

interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** A minimal SSE client over node:http: parses frames into a queue and lets a test await the next one. */
class SseClient {
  readonly events: SseEvent[] = [];
  ended = false;
  headers: http.IncomingHttpHeaders = {};
  private buffer = '';
  private waiters: Array<() => void> = [];
  private req?: http.ClientRequest;

  static open(url: string): Promise<SseClient> {
    const client = new SseClient();
    return new Promise((resolve, reject) => {
      client.req = http.get(url, (res) => {
        client.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => client.feed(chunk));
        res.on('end', () => client.finish());
        res.on('close', () => client.finish());
        resolve(client);
      });
      client.req.on('error', reject);
    });
  }

  async next(predicate: (e: SseEvent) => boolean = () => true): Promise<SseEvent> {
    for (;;) {
      const index = this.events.findIndex(predicate);
      if (index >= 0) return this.events.splice(index, 1)[0];
      if (this.ended) throw new Error('stream ended');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async untilEnded(): Promise<void> {
    while (!this.ended) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.req?.destroy();
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = { data: '' };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        const field = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(value);
        else if (field === 'event') event.event = value;
        else if (field === 'id') event.id = value;
      }
      event.data = data.join('\n');
      this.events.push(event);
    }
    this.wake();
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

/** A ws client with a queue of parsed frames. */
class WsClient {
  readonly frames: Array<{ event: string; data: any }> = [];
  closed = false;
  closeCode?: number;
  private waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw, isBinary) => {
      expect(isBinary).toBe(false);
      this.frames.push(JSON.parse(raw.toString()));
      this.wake();
    });
    ws.on('close', (code) => {
      this.closed = true;
      this.closeCode = code;
      this.wake();
    });
  }

  static open(url: string): Promise<WsClient> {
    const ws = new WebSocket(url);
    const client = new WsClient(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(client));
      ws.once('error', reject);
    });
  }

  async next(predicate: (f: { event: string; data: any }) => boolean = () => true) {
    for (;;) {
      const index = this.frames.findIndex(predicate);
      if (index >= 0) return this.frames.splice(index, 1)[0];
      if (this.closed) throw new Error('socket closed');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async untilClosed(): Promise<void> {
    while (!this.closed) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

async function startHub(options: Partial<EventHubOptions> = {}): Promise<{ hub: EventHub; server: RunningServer }> {
  const hub = new EventHub({
    logger,
    serviceInfo: { service: 'alert-dispatch', version: '1.0.0' },
    wsPath: '/api/v1/ws',
    ...options,
  });
  const { app } = createHttpApp({
    info: { title: 'hub', version: '1' },
    service: 'hub',
    logger,
    errors: detailStyle(),
    routes: [hub.sseRoute(), hub.wsRoute()],
    basePath: '/api/v1',
  });
  const server = await listen(app, {
    port: 0,
    host: '127.0.0.1',
    logger,
    name: 'hub',
    beforeClose: [() => hub.close()],
  });
  hub.attach(server.server);
  return { hub, server };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}

describe('EventHub', () => {
  let running: { hub: EventHub; server: RunningServer } | undefined;
  afterEach(async () => {
    await running?.server.close();
    running = undefined;
  });

  it('streams init, published events and keepalives over SSE with proper framing', async () => {
    running = await startHub({ keepaliveMs: 50 });
    const client = await SseClient.open(`${running.server.url}/api/v1/events`);
    expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(client.headers['cache-control']).toContain('no-cache');
    expect(client.headers['x-accel-buffering']).toBe('no');
    expect(client.headers['x-request-id']).toBeTruthy();

    const init = await client.next();
    expect(init.event).toBe('init');
    const info = JSON.parse(init.data);
    expect(info).toMatchObject({ service: 'alert-dispatch', version: '1.0.0' });
    expect(Number.isNaN(Date.parse(info.server_time))).toBe(false);
    expect(running.hub.stats()).toEqual({ sse: 1, ws: 0, dropped: 0 });

    const action = {
      event_id: 'e1',
      alert_name: 'intrusion',
      reason: 'line one\nline two',
      actions_taken: ['log_alert'],
    };
    running.hub.publish('alert_action', action);
    const received = await client.next((e) => e.event === 'alert_action');
    expect(JSON.parse(received.data)).toEqual(action);
    expect(Number(received.id)).toBeGreaterThan(Number(init.id));

    const keepalive = await client.next((e) => e.event === 'keepalive');
    expect(Number.isNaN(Date.parse(JSON.parse(keepalive.data).timestamp))).toBe(false);

    client.close();
    await until(() => running!.hub.stats().sse === 0);
  });

  it('turns an unserialisable event into an error event', async () => {
    running = await startHub();
    const client = await SseClient.open(`${running.server.url}/api/v1/events`);
    await client.next((e) => e.event === 'init');
    running.hub.publish('alert_action', { big: 1n });
    const error = await client.next();
    expect(error.event).toBe('error');
    expect(JSON.parse(error.data)).toEqual({ message: 'event could not be serialised', event: 'alert_action' });
    client.close();
  });

  it('mirrors events over WebSocket as JSON text frames and refuses other upgrade paths', async () => {
    running = await startHub({ keepaliveMs: 50 });
    const client = await WsClient.open(`${running.server.url.replace('http', 'ws')}/api/v1/ws`);
    const init = await client.next();
    expect(init.event).toBe('init');
    expect(init.data.service).toBe('alert-dispatch');
    running.hub.publish('alert_action', { event_id: 'w1' });
    expect(await client.next((f) => f.event === 'alert_action')).toEqual({
      event: 'alert_action',
      data: { event_id: 'w1' },
    });
    expect((await client.next((f) => f.event === 'keepalive')).data.timestamp).toBeDefined();
    expect(running.hub.stats().ws).toBe(1);

    const refused = new WebSocket(`${running.server.url.replace('http', 'ws')}/api/v1/other`);
    const status = await new Promise<number | undefined>((resolve) => {
      refused.on('unexpected-response', (_req, res) => resolve(res.statusCode));
      refused.on('error', () => resolve(undefined));
    });
    expect(status).toBe(404);

    const plain = await fetch(`${running.server.url}/api/v1/ws`);
    expect(plain.status).toBe(426);
    expect((await plain.json()).detail).toMatch(/Upgrade Required/);

    client.ws.close();
    await until(() => running!.hub.stats().ws === 0);
  });

  it('delivers events published in one turn in order, whatever their size, on both transports', async () => {
    running = await startHub();
    const sse = await SseClient.open(`${running.server.url}/api/v1/events`);
    const ws = await WsClient.open(`${running.server.url.replace('http', 'ws')}/api/v1/ws`);
    await Promise.all([sse.next(), ws.next()]);
    // 10 B, 300 B (16-bit WebSocket length) and 100 kB (64-bit length) payloads, one batch.
    const sizes = [10, 300, 100_000];
    for (const [n, size] of sizes.entries()) running.hub.publish('alert_action', { n, text: 'z'.repeat(size) });
    const ids: number[] = [];
    for (const [n, size] of sizes.entries()) {
      const e = await sse.next();
      expect(e.event).toBe('alert_action');
      expect(JSON.parse(e.data)).toEqual({ n, text: 'z'.repeat(size) });
      ids.push(Number(e.id));
      expect(await ws.next()).toEqual({ event: 'alert_action', data: { n, text: 'z'.repeat(size) } });
    }
    expect(ids).toEqual([ids[0], ids[0] + 1, ids[0] + 2]);
    sse.close();
    ws.ws.close();
  });

  it('drops SSE and WebSocket subscribers that stop reading while fast ones keep receiving', async () => {
    running = await startHub({ maxBufferedEvents: 64, maxBufferedBytes: 256 * 1024 });
    const fast = await SseClient.open(`${running.server.url}/api/v1/events`);
    const fastWs = await WsClient.open(`${running.server.url.replace('http', 'ws')}/api/v1/ws`);

    // The slow subscriber is a raw socket that sends the request and never reads: kernel buffers fill, then ours.
    const slow = net.connect(running.server.port, '127.0.0.1');
    slow.pause();
    await new Promise<void>((resolve) => slow.once('connect', () => resolve()));
    slow.write('GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const slowWs = net.connect(running.server.port, '127.0.0.1');
    slowWs.pause();
    await new Promise<void>((resolve) => slowWs.once('connect', () => resolve()));
    slowWs.write(
      'GET /api/v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    await until(() => running!.hub.stats().sse === 2 && running!.hub.stats().ws === 2);

    const payload = { event_id: 'x', blob: 'y'.repeat(16 * 1024) };
    let published = 0;
    let received = 0;
    // Publish in bursts, letting the fast clients drain between them; bounded loop.
    for (let burst = 0; burst < 400 && running.hub.stats().dropped < 2; burst++) {
      for (let i = 0; i < 10; i++) {
        running.hub.publish('alert_action', { ...payload, n: published++ });
      }
      await fast.next((e) => e.event === 'alert_action' && JSON.parse(e.data).n === published - 1);
      await fastWs.next((f) => f.event === 'alert_action' && f.data.n === published - 1);
      received += 10;
      fast.events.length = 0;
      fastWs.frames.length = 0;
    }
    expect(running.hub.stats()).toEqual({ sse: 1, ws: 1, dropped: 2 });
    running.hub.publish('alert_action', { event_id: 'after-drop' });
    expect(JSON.parse((await fast.next((e) => e.event === 'alert_action')).data).event_id).toBe('after-drop');
    expect((await fastWs.next((f) => f.event === 'alert_action')).data.event_id).toBe('after-drop');
    expect(received).toBe(published);
    slow.destroy();
    slowWs.destroy();
    fast.close();
    fastWs.ws.close();
  });

  it('answers 503 beyond maxSubscribers on both transports', async () => {
    running = await startHub({ maxSubscribers: 1 });
    const first = await SseClient.open(`${running.server.url}/api/v1/events`);
    await first.next();
    const second = await fetch(`${running.server.url}/api/v1/events`);
    expect(second.status).toBe(503);
    expect(await second.json()).toEqual({ detail: 'Too many stream subscribers' });
    const refused = new WebSocket(`${running.server.url.replace('http', 'ws')}/api/v1/ws`);
    const status = await new Promise<number | undefined>((resolve) => {
      refused.on('unexpected-response', (_req, res) => resolve(res.statusCode));
      refused.on('error', () => resolve(undefined));
    });
    expect(status).toBe(503);
    first.close();
  });

  it('ends every SSE stream and closes every WebSocket on close()', async () => {
    running = await startHub();
    const sse = await Promise.all([1, 2].map(() => SseClient.open(`${running!.server.url}/api/v1/events`)));
    const ws = await Promise.all(
      [1, 2].map(() => WsClient.open(`${running!.server.url.replace('http', 'ws')}/api/v1/ws`)),
    );
    await Promise.all([...sse.map((c) => c.next()), ...ws.map((c) => c.next())]);
    expect(running.hub.stats()).toEqual({ sse: 2, ws: 2, dropped: 0 });

    await running.hub.close();
    await Promise.all([...sse.map((c) => c.untilEnded()), ...ws.map((c) => c.untilClosed())]);
    expect(ws.map((c) => c.closeCode)).toEqual([1001, 1001]);
    expect(running.hub.stats()).toEqual({ sse: 0, ws: 0, dropped: 0 });

    const late = await fetch(`${running.server.url}/api/v1/events`);
    expect(late.status).toBe(503);
    expect(await late.json()).toEqual({ detail: 'Service is shutting down' });
  });
});
