import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { defineRoute, formatSseMessage, HttpError, openSseResponse, type RouteSpec } from '../../lib/http/index.js';
import type { Logger } from '../../lib/log/index.js';
import { streamEvents } from '../routes/response-schemas.js';
import { compareBroadcastIds } from '../../lib/shared-state/index.js';
import { wsTextFrame } from './ws-frame.js';

/** Options of the EventHub; budgets are per subscriber. */
export interface EventHubOptions {
  logger: Logger;
  /** Interval of `keepalive` events (the contract says 15 s; shorter in tests). */
  keepaliveMs?: number;
  /** Events written but not yet handed to the kernel before a subscriber counts as too slow and is dropped. */
  maxBufferedEvents?: number;
  /** Bytes queued in user space before a subscriber is dropped, whatever the event count. */
  maxBufferedBytes?: number;
  /**
   * Shortest time between two writes to the subscribers (default 20 ms). An event after a quiet spell goes out at
   * once; events closer together are sent as one write. Each write costs a system call per subscriber, so with
   * thousands of subscribers this bounds the write rate (and CPU) whatever the alert rate, for at most this delay.
   */
  minFlushIntervalMs?: number;
  /** SSE + WebSocket subscribers served at once (default 10,000); more are answered 503, keeping file descriptors. */
  maxSubscribers?: number;
  /** Sent as the `init` event's data, with the server time added. */
  serviceInfo: Record<string, unknown>;
  /** Absolute path WebSocket upgrades are accepted on: the app's base path + `/ws` (the routes are relative to it). */
  wsPath: string;
  /**
   * Set when the events come numbered from the shared broadcast of every replica (`deliverNumbered`): the SSE `id` is
   * that shared id, the hub's own events (`init`, `keepalive`, local fallbacks) carry none, and an SSE client
   * reconnecting with `Last-Event-ID` first gets what `replay` still holds after that id.
   */
  replay?: (afterId: string) => Promise<NumberedEvent[]>;
}

/** An event numbered by the shared broadcast; `json` is its data, serialised. */
export interface NumberedEvent {
  id: string;
  event: string;
  json: string;
}

/** Subscriber counts and the number dropped for being too slow since start. */
export interface EventHubStats {
  sse: number;
  ws: number;
  dropped: number;
}

/** Events serialised once for every transport: SSE frames and WebSocket frames (headers included), concatenated. */
interface Frame {
  count: number;
  sse: Buffer;
  ws: Buffer;
  /** The shared id of a single numbered event. */
  id?: string;
  /** The single frames of a batch (absent: this frame is single). */
  parts?: Frame[];
  /** `sse` as one HTTP/1.1 chunk, made on first use. */
  sseChunk?: Buffer;
}

const CRLF = Buffer.from('\r\n');

function chunkedFrame(frame: Frame): Buffer {
  return (frame.sseChunk ??= Buffer.concat([Buffer.from(`${frame.sse.length.toString(16)}\r\n`), frame.sse, CRLF]));
}

/** A connected stream client; `pending` counts events whose write has not been handed to the kernel yet. */
interface Subscriber {
  kind: 'sse' | 'ws';
  pending: number;
  /** While its replay is read: the frames published meanwhile, sent after the replay. */
  held?: Frame[];
  /** After a replay: the last shared id it was sent; frames up to it are not sent again (cleared once passed). */
  seen?: string;
  send(frame: Frame): void;
  buffered(): number;
  end(): void;
  /** Forceful teardown for a dropped subscriber. */
  destroy(): void;
}

const CLOSE_GRACE_MS = 2000;

/** `frames` as one frame: itself when single, else their bytes concatenated (the parts kept for filtering). */
function batchOf(frames: Frame[]): Frame {
  if (frames.length === 1) return frames[0];
  return {
    count: frames.length,
    sse: Buffer.concat(frames.map((f) => f.sse)),
    ws: Buffer.concat(frames.map((f) => f.ws)),
    parts: frames,
  };
}

/**
 * Fans events out to SSE and WebSocket subscribers. publish() serialises once and never waits for I/O: events
 * published in the same event-loop turn are sent as one write per subscriber (so batches grow with load instead of
 * the write count), each subscriber has a bounded buffer and is dropped (and counted) when it cannot keep up.
 */
export class EventHub {
  private readonly logger: Logger;
  private readonly keepaliveMs: number;
  private readonly maxBufferedEvents: number;
  private readonly maxBufferedBytes: number;
  private readonly maxSubscribers: number;
  private readonly minFlushIntervalMs: number;
  private readonly serviceInfo: Record<string, unknown>;
  private readonly wsPath: string;
  private readonly replay?: (afterId: string) => Promise<NumberedEvent[]>;
  private readonly subscribers = new Set<Subscriber>();
  private readonly wss: WebSocketServer;
  private readonly keepaliveTimer: NodeJS.Timeout;
  private readonly attached = new Map<http.Server, (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void>();
  private nextId = 1;
  private queued: Frame[] = [];
  private flushScheduled = false;
  private lastFlush = -Infinity;
  private counts = { sse: 0, ws: 0 };
  private dropped = 0;
  private closed = false;

  constructor(opts: EventHubOptions) {
    this.logger = opts.logger;
    this.keepaliveMs = opts.keepaliveMs ?? 15_000;
    this.maxBufferedEvents = opts.maxBufferedEvents ?? 1000;
    this.maxBufferedBytes = opts.maxBufferedBytes ?? 4 * 1024 * 1024;
    this.maxSubscribers = opts.maxSubscribers ?? 10_000;
    this.minFlushIntervalMs = opts.minFlushIntervalMs ?? 20;
    this.serviceInfo = opts.serviceInfo;
    this.wsPath = opts.wsPath;
    this.replay = opts.replay;
    // Clients only listen; a small payload cap keeps a misbehaving client from making us buffer its frames.
    this.wss = new WebSocketServer({ noServer: true, maxPayload: 4096, perMessageDeflate: false });
    this.keepaliveTimer = setInterval(() => this.tick(), this.keepaliveMs);
    this.keepaliveTimer.unref();
  }

  /** Sends an event to every subscriber; serialisation failures become an `error` event instead. */
  publish(event: 'alert_action' | 'error' | string, data: unknown): void {
    if (this.closed || this.subscribers.size === 0) return;
    let frame: Frame;
    try {
      frame = this.frame(event, data);
    } catch (err) {
      this.logger.error('stream event could not be serialised', { event, error: (err as Error).message });
      frame = this.frame('error', { message: 'event could not be serialised', event });
    }
    this.enqueue(frame);
  }

  /** Sends an event numbered by the shared broadcast (the `replay` mode): its id is the SSE `id`. */
  deliverNumbered(numbered: NumberedEvent): void {
    if (this.closed || this.subscribers.size === 0) return;
    this.enqueue(this.numberedFrame(numbered));
  }

  private enqueue(frame: Frame): void {
    this.queued.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      const wait = this.lastFlush + this.minFlushIntervalMs - performance.now();
      if (wait <= 0) setImmediate(this.flush);
      else setTimeout(this.flush, wait);
    }
  }

  /** GET route of the SSE stream (`init`, `alert_action`, `keepalive`, `error`). */
  sseRoute(): RouteSpec {
    return defineRoute({
      method: 'get',
      path: '/events',
      summary: 'Server-Sent Events stream of dispatch results',
      description:
        'Events: `init` on connect (service information and `server_time`), `alert_action` after each dispatch, ' +
        `\`keepalive\` every ${Math.round(this.keepaliveMs / 1000)} s (\`{timestamp}\`), \`error\` on a stream-level ` +
        'error (`{message}`). Each frame carries an increasing `id`. Clients too slow to keep up are disconnected.',
      tags: ['events'],
      responses: {
        200: { description: 'An endless text/event-stream', contentType: 'text/event-stream', events: streamEvents },
        503: { description: 'The service is shutting down, or serves its maximum number of subscribers' },
      },
      handler: (ctx) => {
        if (this.closed) throw new HttpError(503, 'Service is shutting down');
        if (this.full()) throw new HttpError(503, 'Too many stream subscribers', { 'Retry-After': '5' });
        const lastEventId = ctx.get('last-event-id');
        const res = openSseResponse(ctx);
        this.addSse(res, ctx.state.requestId, this.replay && lastEventId ? lastEventId : undefined);
      },
    });
  }

  /** Documents the WebSocket endpoint; a plain GET without an upgrade is answered 426. */
  wsRoute(): RouteSpec {
    return defineRoute({
      method: 'get',
      path: '/ws',
      summary: 'WebSocket stream mirroring the SSE events',
      description:
        'Upgrade to a WebSocket to receive JSON text frames `{"event": name, "data": payload}` with the same events ' +
        'as the SSE stream. Messages sent by the client are ignored.',
      tags: ['events'],
      responses: {
        101: { description: 'Switching Protocols: the WebSocket is open (with an upgrade request)' },
        426: { description: 'Upgrade to a WebSocket required' },
      },
      handler: () => {
        throw new HttpError(426, 'Upgrade Required: connect with a WebSocket client', { Upgrade: 'websocket' });
      },
    });
  }

  /** Serves WebSocket upgrades on the WebSocket path of `server`; upgrades to any other path are refused with 404. */
  attach(server: http.Server): void {
    if (this.attached.has(server)) return;
    const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== this.wsPath || this.closed || this.full()) {
        const status = path !== this.wsPath ? '404 Not Found' : '503 Service Unavailable';
        socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.addWs(ws, socket));
    };
    server.on('upgrade', onUpgrade);
    this.attached.set(server, onUpgrade);
  }

  /** Ends every SSE response, closes every WebSocket (1001) and stops the keepalive timer. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    clearInterval(this.keepaliveTimer);
    for (const [server, listener] of this.attached) server.off('upgrade', listener);
    this.attached.clear();
    const subscribers = [...this.subscribers];
    const ended = subscribers.map(
      (s) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            s.destroy();
            resolve();
          }, CLOSE_GRACE_MS);
          timer.unref();
          this.onGone.set(s, () => {
            clearTimeout(timer);
            resolve();
          });
          s.end();
        }),
    );
    await Promise.all(ended);
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  /** Current subscriber counts and the number of subscribers dropped so far. */
  stats(): EventHubStats {
    return { sse: this.counts.sse, ws: this.counts.ws, dropped: this.dropped };
  }

  private readonly onGone = new Map<Subscriber, () => void>();

  private full(): boolean {
    return this.subscribers.size >= this.maxSubscribers;
  }

  private frame(event: string, data: unknown): Frame {
    const json = JSON.stringify(data ?? null);
    // With shared numbering only the broadcast's ids may appear, or a reconnecting client would echo a local one.
    const id = this.replay ? undefined : this.nextId++;
    return {
      count: 1,
      sse: Buffer.from(formatSseMessage({ id, event, data: json })),
      ws: wsTextFrame(Buffer.from(`{"event":${JSON.stringify(event)},"data":${json}}`)),
    };
  }

  private numberedFrame({ id, event, json }: NumberedEvent): Frame {
    return {
      count: 1,
      id,
      sse: Buffer.from(formatSseMessage({ id, event, data: json })),
      ws: wsTextFrame(Buffer.from(`{"event":${JSON.stringify(event)},"data":${json}}`)),
    };
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    this.lastFlush = performance.now();
    const frames = this.queued;
    if (frames.length === 0) return;
    this.queued = [];
    const batch = batchOf(frames);
    for (const subscriber of this.subscribers) this.deliver(subscriber, batch);
  };

  private deliver(subscriber: Subscriber, frame: Frame): void {
    if (subscriber.held) {
      subscriber.held.push(...(frame.parts ?? [frame]));
      return;
    }
    if (subscriber.seen !== undefined) {
      const unseen = this.unseen(subscriber, frame.parts ?? [frame]);
      if (unseen.length === 0) return;
      frame = batchOf(unseen);
    }
    if (subscriber.pending >= this.maxBufferedEvents || subscriber.buffered() > this.maxBufferedBytes) {
      this.drop(subscriber);
      return;
    }
    this.send(subscriber, frame);
  }

  private drop(subscriber: Subscriber): void {
    this.dropped++;
    this.logger.warn('stream subscriber dropped: too slow', {
      transport: subscriber.kind,
      buffered_events: subscriber.pending,
      buffered_bytes: subscriber.buffered(),
    });
    this.remove(subscriber);
    subscriber.destroy();
  }

  /**
   * The frames of `parts` after the subscriber's `seen` id (unnumbered ones always). The broadcast arrives in id
   * order, so once a frame after `seen` went out none can come at or before it: `seen` is cleared.
   */
  private unseen(subscriber: Subscriber, parts: Frame[]): Frame[] {
    const unseen: Frame[] = [];
    for (const part of parts) {
      if (part.id === undefined) unseen.push(part);
      else if (subscriber.seen === undefined || compareBroadcastIds(part.id, subscriber.seen) > 0) {
        unseen.push(part);
        subscriber.seen = undefined;
      }
    }
    return unseen;
  }

  private add(subscriber: Subscriber, lastEventId?: string): void {
    // Events published before this subscriber connected go out first, so its ids start after its `init`.
    this.flush();
    this.subscribers.add(subscriber);
    this.counts[subscriber.kind]++;
    this.deliver(subscriber, this.frame('init', { ...this.serviceInfo, server_time: new Date().toISOString() }));
    if (lastEventId !== undefined) void this.catchUp(subscriber, lastEventId);
  }

  /**
   * Sends a reconnecting subscriber what it missed: the kept events after `lastEventId`, then those published while
   * they were read, each once (an event both kept and delivered live is sent once, by id). Held from the start, so
   * nothing published meanwhile slips between the two. Replay unavailable: it goes on live, and is told so.
   */
  private async catchUp(subscriber: Subscriber, lastEventId: string): Promise<void> {
    subscriber.held = [];
    let missed: Frame[];
    try {
      missed = (await this.replay!(lastEventId)).map((numbered) => this.numberedFrame(numbered));
    } catch (err) {
      this.logger.debug('stream replay unavailable', { error: (err as Error).message });
      missed = [this.frame('error', { message: 'missed events could not be replayed' })];
    }
    const held = subscriber.held;
    subscriber.held = undefined;
    if (!this.subscribers.has(subscriber)) return;
    subscriber.seen = lastEventId;
    const frames = [...missed, ...held];
    // seen is cleared by the first newer frame: keep it at the last one sent, for the live frames still to come.
    let last: string | undefined = lastEventId;
    const unseen = frames.filter((frame) => {
      if (frame.id === undefined) return true;
      if (last !== undefined && compareBroadcastIds(frame.id, last) <= 0) return false;
      last = frame.id;
      return true;
    });
    subscriber.seen = last;
    if (unseen.length > 0) this.send(subscriber, batchOf(unseen));
  }

  private send(subscriber: Subscriber, frame: Frame): void {
    try {
      subscriber.send(frame);
    } catch (err) {
      this.logger.warn('stream write failed', { transport: subscriber.kind, error: (err as Error).message });
      this.remove(subscriber);
      subscriber.destroy();
    }
  }

  private remove(subscriber: Subscriber): void {
    if (this.subscribers.delete(subscriber)) this.counts[subscriber.kind]--;
    const gone = this.onGone.get(subscriber);
    if (gone) {
      this.onGone.delete(subscriber);
      gone();
    }
  }

  /**
   * With chunked transfer encoding (HTTP/1.1 clients) each batch goes to the socket as one pre-framed HTTP chunk,
   * built once per batch: res.write() would frame it again per subscriber as a four-buffer writev, about three times
   * the cost. res.end() still writes the terminating chunk. HTTP/1.0 clients get plain writes.
   */
  private addSse(res: http.ServerResponse, requestId: string, lastEventId?: string): void {
    const socket = res.socket;
    const raw = res.chunkedEncoding && socket !== null;
    const subscriber: Subscriber = {
      kind: 'sse',
      pending: 0,
      send: (frame) => {
        if (res.writableEnded) return;
        subscriber.pending += frame.count;
        const done = () => (subscriber.pending -= frame.count);
        if (raw) socket.write(chunkedFrame(frame), done);
        else res.write(frame.sse, done);
      },
      buffered: () => res.writableLength + (socket?.writableLength ?? 0),
      // The stream is over for good: its connection too, or an idle keep-alive would hold the server's close open.
      end: () => res.end(() => socket?.end()),
      destroy: () => res.destroy(),
    };
    res.on('close', () => this.remove(subscriber));
    res.on('error', (err) => this.logger.debug('sse stream error', { requestId, error: err.message }));
    this.add(subscriber, lastEventId);
  }

  /**
   * Frames are pre-built once per batch and written straight to the upgraded socket (one write per subscriber per
   * batch instead of one ws.send per event); ws itself still handles pings, pongs and the closing handshake.
   */
  private addWs(ws: WebSocket, socket: Duplex): void {
    let alive = true;
    const subscriber: Subscriber & { ping(): void } = {
      kind: 'ws',
      pending: 0,
      send: (frame) => {
        if (ws.readyState !== ws.OPEN) return;
        subscriber.pending += frame.count;
        socket.write(frame.ws, () => (subscriber.pending -= frame.count));
      },
      buffered: () => socket.writableLength,
      end: () => ws.close(1001, 'server shutting down'),
      destroy: () => ws.terminate(),
      // A peer that answered no ping since the last keepalive is gone without a FIN: free its socket.
      ping: () => {
        if (!alive) return subscriber.destroy();
        alive = false;
        ws.ping();
      },
    };
    ws.on('pong', () => (alive = true));
    ws.on('close', () => this.remove(subscriber));
    ws.on('error', (err) => this.logger.debug('websocket error', { error: err.message }));
    this.pingers.add(subscriber);
    ws.once('close', () => this.pingers.delete(subscriber));
    this.add(subscriber);
  }

  private readonly pingers = new Set<{ ping(): void }>();

  private tick(): void {
    this.publish('keepalive', { timestamp: new Date().toISOString() });
    for (const p of this.pingers) p.ping();
  }
}
