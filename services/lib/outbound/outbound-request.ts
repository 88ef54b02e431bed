import { lookup as dnsLookup } from 'node:dns/promises';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { linkAbort } from '../abort/index.js';
import { InvalidHttpUrlError, parseHttpUrl } from '../http/index.js';
import { processUserAgent } from '../user-agent/index.js';
import { bareHost } from './allow-list.js';
import { OutboundError } from './outbound-error.js';
import { assertAllowed, type OutboundPolicy } from './outbound-policy.js';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (the system resolver by default; tests inject their own). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })) as ResolvedAddress[];

/** An outbound HTTP request: the guard's policy and the bounds of the exchange. */
export interface OutboundRequestOptions {
  policy: OutboundPolicy;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Bound of the whole exchange, redirects and body included. */
  timeoutMs: number;
  /** Redirects followed (each target checked again); a 3xx past none is answered to the caller. Default 0. */
  maxRedirects?: number;
  /** Largest body `OutboundResponse.bytes` reads. Default 1 MiB. */
  maxBytes?: number;
  /** Aborts the exchange with the signal's reason. */
  signal?: AbortSignal;
  resolve?: Resolver;
}

/** The answer of an outbound request; read its body with `bytes()` or drop it with `discard()`. */
export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The URL that answered (after redirects). */
  url: URL;
  /** The body, bounded by `maxBytes` (OutboundError 'too-large') and by the exchange's time. */
  bytes(): Promise<Buffer>;
  discard(): void;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * A lookup for the socket that resolves once, refuses unless every address passes the policy, and hands the socket
 * only the addresses it checked: the connection goes where the check looked, so a second DNS answer (rebinding)
 * never counts.
 */
function guardedLookup(policy: OutboundPolicy, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (resolved) => {
        const wanted = options.family;
        const family = wanted === 4 || wanted === 'IPv4' ? 4 : wanted === 6 || wanted === 'IPv6' ? 6 : 0;
        const usable = family === 0 ? resolved : resolved.filter((a) => a.family === family);
        if (usable.length === 0) {
          callback(new OutboundError('dns', `DNS lookup of ${hostname} found no address`), '', 0);
          return;
        }
        try {
          assertAllowed(
            policy,
            hostname,
            resolved.map((a) => a.address),
          );
        } catch (error) {
          callback(error as OutboundError, '', 0);
          return;
        }
        if (options.all) callback(null, usable);
        else callback(null, usable[0].address, usable[0].family);
      },
      (error: NodeJS.ErrnoException) =>
        callback(new OutboundError('dns', `DNS lookup of ${hostname} failed (${error.code ?? error.message})`), '', 0),
    );
  };
}

/** The error of a failed exchange, in the guard's words (an abort keeps the caller's reason). */
function failure(error: unknown, url: URL): unknown {
  if (error instanceof OutboundError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new OutboundError('connect', `connection to ${url.host} failed (${code ?? (error as Error).message})`);
}

/**
 * Sends one HTTP request where `policy` allows: the host is resolved, every address checked (IPv4, IPv6 and
 * IPv4-mapped; loopback, private, link-local, unique-local, CGNAT, multicast and unspecified refused unless
 * allow-listed), the socket connects to the checked address with the URL's host in `Host` and TLS SNI, and every
 * redirect target is checked the same way. Rejects with OutboundError (refused, DNS, connect, time-out, redirects,
 * invalid URL) before any byte goes to a refused address; pooled sockets are never shared with other requests.
 */
export async function outboundRequest(
  target: string | URL,
  options: OutboundRequestOptions,
): Promise<OutboundResponse> {
  const { policy, timeoutMs, signal } = options;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const lookup = guardedLookup(policy, options.resolve ?? systemResolver);
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new OutboundError('timeout', `timed out after ${seconds(timeoutMs)}`)),
    timeoutMs,
  );
  // Linked, not listened to: the caller's signal may be long-lived and shared by many exchanges in flight.
  const unlink = signal && linkAbort(signal, deadline);
  const done = () => {
    clearTimeout(timer);
    unlink?.();
  };

  let method = options.method ?? 'GET';
  let body = options.body;
  let url: URL;
  try {
    url = parseHttpUrl(String(target), 'URL');
    for (let hop = 0; ; hop++) {
      const response = await exchange(url, method, options.headers, body, lookup, policy, deadline.signal);
      const location = response.headers.location;
      if (response.statusCode! >= 300 && response.statusCode! < 400 && location && (options.maxRedirects ?? 0) > 0) {
        response.destroy();
        if (hop >= options.maxRedirects!)
          throw new OutboundError('redirects', `redirected more than ${options.maxRedirects} times`);
        url = parseHttpUrl(URL.canParse(location, url) ? new URL(location, url).href : location, 'redirect target');
        // What browsers do: a redirected POST becomes a GET without body, except after 307 and 308.
        if (response.statusCode !== 307 && response.statusCode !== 308 && method === 'POST') {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      return answer(response, url, maxBytes, deadline.signal, done);
    }
  } catch (error) {
    done();
    if (error instanceof InvalidHttpUrlError) throw new OutboundError('invalid-url', error.message);
    throw error;
  }
}

/** One request/response exchange with the guarded lookup; resolves at the response head. */
function exchange(
  url: URL,
  method: string,
  headers: Record<string, string> | undefined,
  body: string | Buffer | undefined,
  lookup: LookupFunction,
  policy: OutboundPolicy,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  // An IP literal never reaches the lookup: check it here.
  const host = bareHost(url.hostname);
  if (isIP(host)) assertAllowed(policy, host, [host]);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method,
      headers: withUserAgent(
        body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      ),
      lookup,
      agent: false, // a pooled socket would skip the check of the next request to the same host
    });
    const onAbort = () => request.destroy(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    request.once('response', (response) => {
      signal.removeEventListener('abort', onAbort);
      resolve(response);
    });
    // `on`, not `once`: a socket may fail again after the first error, and an unheard error would crash the process.
    request.on('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(signal.aborted ? signal.reason : failure(error, url));
    });
    request.end(body);
  });
}

/** Wraps the final response: its body read within `maxBytes` and the deadline, which ends with it. */
function answer(
  response: IncomingMessage,
  url: URL,
  maxBytes: number,
  signal: AbortSignal,
  done: () => void,
): OutboundResponse {
  const onAbort = () => response.destroy(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  // A body nobody reads may still fail (the deadline destroys it): that must not become an unhandled error.
  response.on('error', () => undefined);
  response.once('close', () => {
    signal.removeEventListener('abort', onAbort);
    done();
  });
  const tooLarge = () => new OutboundError('too-large', `answer larger than ${maxBytes} bytes`);
  return {
    status: response.statusCode!,
    headers: response.headers,
    url,
    discard: () => void response.destroy(),
    bytes: () =>
      new Promise<Buffer>((resolve, reject) => {
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          response.destroy();
          return reject(tooLarge());
        }
        const chunks: Buffer[] = [];
        let total = 0;
        response.on('data', (chunk: Buffer) => {
          total += chunk.length;
          if (total > maxBytes) response.destroy(tooLarge());
          else chunks.push(chunk);
        });
        response.once('end', () => resolve(Buffer.concat(chunks, total)));
        response.once('error', (error) => reject(signal.aborted ? signal.reason : failure(error, url)));
        response.once('close', () => {
          if (!response.complete) reject(signal.aborted ? signal.reason : failure(new Error('answer cut short'), url));
        });
      }),
  };
}

/** The headers with this process's User-Agent unless the caller set one (Node's http sends none by itself). */
function withUserAgent(headers: Record<string, string> | undefined): Record<string, string> {
  const named = Object.keys(headers ?? {}).some((name) => name.toLowerCase() === 'user-agent');
  return named ? headers! : { 'user-agent': processUserAgent(), ...headers };
}
