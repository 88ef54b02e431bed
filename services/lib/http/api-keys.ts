import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { HttpError } from './errors.js';

/** The protection space every Argus service names in WWW-Authenticate: the services share one set of keys. */
const REALM = 'argus';

/** `Bearer <token>` (RFC 6750 section 2.1; the scheme is case-insensitive), capturing the token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/**
 * The bearer keys a service accepts. Only their SHA-256 digests are kept, and a presented token is compared as a
 * digest with every one of them in constant time, so neither its length nor how much of it matches shows in the time
 * an answer takes; the keys themselves are never logged or rendered.
 */
export class ApiKeys {
  private readonly digests: Buffer[];

  private constructor(keys: readonly string[]) {
    this.digests = keys.map(sha256);
  }

  /** The keys as a guard, or undefined for none (no key needed). */
  static of(keys: readonly string[] | undefined): ApiKeys | undefined {
    return keys && keys.length > 0 ? new ApiKeys(keys) : undefined;
  }

  /** Whether an Authorization header value is `Bearer <one of the keys>`. */
  accepts(authorization: string | undefined): boolean {
    const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
    if (token === undefined) return false;
    const presented = sha256(token);
    let matched = false;
    // Every key is compared, whichever matches: the time does not tell which one, or how many there are before it.
    for (const digest of this.digests) matched = timingSafeEqual(presented, digest) || matched;
    return matched;
  }

  /** The 401 of a request without an accepted key; `error="invalid_token"` when it sent a bearer token (RFC 6750). */
  refusal(authorization: string | undefined): HttpError {
    const sent = authorization !== undefined && BEARER.test(authorization);
    const challenge = `Bearer realm="${REALM}"${sent ? ', error="invalid_token"' : ''}`;
    const message = sent
      ? 'The API key is not valid'
      : 'An API key is required: send it as Authorization: Bearer <key>';
    return new HttpError(401, message, { 'WWW-Authenticate': challenge });
  }
}

/** Renders an error body in the app's style (createHttpApp registers it). */
type ErrorRenderer = (status: number, message: string) => unknown;

const guards = new WeakMap<Koa, ApiKeys>();
const renderers = new WeakMap<Koa, ErrorRenderer>();

/** Has `app` require one of `keys` on every API request, or none when undefined (listen() calls it each time). */
export function requireApiKeys(app: Koa, keys: ApiKeys | undefined): void {
  if (keys) guards.set(app, keys);
  else guards.delete(app);
}

/** The keys `app` requires, undefined when it requires none. */
export function apiKeysOf(app: Koa): ApiKeys | undefined {
  return guards.get(app);
}

/** How `app` renders an error body: for answers given outside Koa (a refused WebSocket upgrade). */
export function setErrorRenderer(app: Koa, render: ErrorRenderer): void {
  renderers.set(app, render);
}

/**
 * Lets `server`'s `upgrade` events (WebSocket endpoints) reach their listeners only with a key `app` accepts: the check
 * sits where the event is emitted, so every WebSocket endpoint a service attaches, now or later, is behind the keys
 * without code of its own (listeners cannot stop one another). A refused upgrade is answered 401 in the app's error
 * style and its socket closed.
 */
export function guardUpgrades(server: http.Server, app: Koa, onRefused: (req: http.IncomingMessage) => void): void {
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: unknown[]) => boolean;
  server.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event === 'upgrade') {
      const [req, socket] = args as [http.IncomingMessage, Duplex];
      const keys = apiKeysOf(app);
      if (keys && !keys.accepts(req.headers.authorization)) {
        refuseUpgrade(app, keys, req, socket);
        onRefused(req);
        return true;
      }
    }
    return emit(event, ...args);
  }) as typeof server.emit;
}

function refuseUpgrade(app: Koa, keys: ApiKeys, req: http.IncomingMessage, socket: Duplex): void {
  const refusal = keys.refusal(req.headers.authorization);
  const render = renderers.get(app) ?? ((_status: number, message: string) => ({ message }));
  const body = JSON.stringify(render(refusal.status, refusal.message));
  const head = [
    'HTTP/1.1 401 Unauthorized',
    ...Object.entries(refusal.headers).map(([name, value]) => `${name}: ${value}`),
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  // The server no longer listens for errors on an upgraded socket: a client resetting it must not throw.
  socket.on('error', () => socket.destroy());
  // Closed once the answer is out, as `ws` does: the server keeps its sockets half-open (allowHalfOpen) and no longer
  // times out an upgraded one, so a client that never closes its side would hold the socket and a graceful stop.
  socket.once('finish', () => socket.destroy());
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}
