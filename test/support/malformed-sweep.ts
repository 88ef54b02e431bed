import http from 'node:http';
import zlib from 'node:zlib';
import { HEALTH_PATH } from '../../services/lib/http/index.js';
import { checkWireAnswer } from './contract-check.js';
import { gzipBomb, nestedJson } from './hostile-bodies.js';

/** A file a multipart case sends: its name and bytes. */
export interface SweepFile {
  name: string;
  bytes: Buffer;
}

/**
 * What a multipart endpoint reads: the field of its files, text fields sent with them, and the file the cut-short and
 * aborted cases send (default: a text file; give one the route starts storing, so that the cut lands in real work).
 */
export interface SweepMultipart {
  fileField: string;
  fields?: Record<string, string>;
  file?: SweepFile;
}

/** What an endpoint reads: a JSON body (a base body to mutate), a multipart form, or nothing. */
export type SweepBody = { json: Record<string, unknown> } | { multipart: SweepMultipart } | undefined;

/** One endpoint of a service, as the sweep sends to it. */
export interface SweepEndpoint {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path under the base URL; `:name` segments are filled from `params`. */
  path: string;
  /** A value for each `:name` segment; each is also replaced by hostile values (traversal, null bytes, …). */
  params?: Record<string, string>;
  /**
   * The base body the cases mutate. Choose one the endpoint refuses at validation or lookup (a missing video, an
   * undecodable image): the sweep must never start real work (model inference, media processing).
   */
  body?: SweepBody;
  /** Every method the path answers (405 answers must list them in Allow). */
  allow: string[];
  /** The contract gives every field a default, so an empty JSON body is a valid request: it is not sent. */
  emptyBodyValid?: boolean;
}

/** Checks one error answer's body: true when it has the service's error shape. */
export type ErrorShape = (body: unknown, status: number) => boolean;

/** What the sweep sends to a service. */
export interface SweepOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:1234/api/v1` (loopback only). */
  base: string;
  endpoints: SweepEndpoint[];
  errorShape: ErrorShape;
  /**
   * Health URLs (loopback) that must answer 200 after every case: the service's own, and under `argus up` every
   * service's, since one process holds them all.
   */
  health: string[];
  /**
   * The API key the service requires (ARGUS_API_KEYS): every case carries it, and each endpoint also gets the key
   * cases (no Authorization header, another scheme, a wrong key, a bare `Bearer`, a 10 kB token), each answered 401
   * with a Bearer challenge.
   */
  apiKey?: string;
  /**
   * `dangerous`: only the cases that have taken a process down or could (cut-short, aborted, bombs, nesting);
   * `api-keys`: only the key cases (with `apiKey`).
   */
  only?: 'dangerous' | 'api-keys';
}

/** A case that was not answered as it must be. */
export interface SweepFailure {
  endpoint: string;
  case: string;
  status: number;
  why: string;
  body: string;
}

/** Every case sent and the ones that failed. */
export interface SweepReport {
  cases: number;
  failures: SweepFailure[];
}

/** One malformed request. */
interface SweepCase {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
  /** A status the answer must have (default: any 4xx). */
  status?: number;
  /** Methods an answer's Allow header must name. */
  allow?: string[];
  /** Sends `abortAfter` bytes of `body` (declaring all of it), then closes the connection: no answer is awaited. */
  abortAfter?: number;
  /** Among the cases that have taken a process down or could. */
  dangerous?: boolean;
  /** A key case: sent without the sweep's key (its own Authorization, or none), answered 401 with a challenge. */
  keyCase?: boolean;
}

const MIB = 1024 * 1024;

/** Raw path segments that must never reach a file or object outside its root. */
const HOSTILE_SEGMENTS = [
  '%2e%2e',
  '..%2f..%2f..%2fetc%2fpasswd',
  '%2e%2e%5c%2e%2e%5cwindows',
  'a%00b',
  '%ff%fe',
  '%252e%252e%252f',
  'x'.repeat(4096),
];

/** Markers of a stack trace or an internal path in an answer. */
const LEAKS = /\bat [^\s]+ \(|node_modules|\/work\/|\/home\/|\/tmp\/|\.ts:\d+|\.js:\d+|Error: /;

/** A value of another JSON type than `value`. */
function wrongType(value: unknown): unknown {
  if (typeof value === 'string') return 12345;
  if (typeof value === 'number') return 'not-a-number';
  if (typeof value === 'boolean') return 'maybe';
  if (Array.isArray(value)) return { not: 'an array' };
  if (value && typeof value === 'object') return 'not-an-object';
  return [];
}

function fillPath(template: string, params: Record<string, string> = {}, override?: [string, string]): string {
  return template.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) =>
    override?.[0] === name ? override[1] : encodeURIComponent(params[name] ?? name),
  );
}

/** The boundary of every multipart body the sweep builds. */
const BOUNDARY = 'sweep-boundary-7d1f';

/** A file part of a multipart body; `name` undefined sends a part without a filename (a text field to busboy). */
type FilePart = { field: string; name: string | undefined; bytes: Buffer };

/**
 * A multipart body with text fields and one file part (or none), with the offsets the cut-short cases cut at: where
 * the file part's header starts, where its bytes start, and where the closing boundary starts.
 */
function multipart(fields: Record<string, string>, file?: FilePart) {
  const parts: Buffer[] = Object.entries(fields).map(([name, value]) =>
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
  );
  const at = (list: Buffer[]) => list.reduce((sum, part) => sum + part.length, 0);
  const offsets = { header: 0, bytes: 0, closing: 0 };
  if (file) {
    offsets.header = at(parts);
    const filename = file.name === undefined ? '' : `; filename="${file.name}"`;
    parts.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${file.field}"${filename}\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
      ),
    );
    offsets.bytes = at(parts);
    parts.push(file.bytes, Buffer.from('\r\n'));
  }
  offsets.closing = at(parts);
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${BOUNDARY}`, offsets };
}

function jsonCases(method: string, path: string, base: Record<string, unknown>, emptyValid: boolean): SweepCase[] {
  const json = (value: unknown, headers: Record<string, string> = {}) => ({
    method,
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
  });
  const cases: SweepCase[] = [];
  for (const [field, value] of Object.entries(base)) {
    cases.push({ name: `wrong type of ${field}`, ...json({ ...base, [field]: wrongType(value) }) });
    if (typeof value === 'string') {
      cases.push({ name: `huge string in ${field}`, ...json({ ...base, [field]: 'x'.repeat(MIB) }) });
      cases.push({ name: `null byte in ${field}`, ...json({ ...base, [field]: `${value}\u0000../x` }) });
    }
  }
  const valid = JSON.stringify(base);
  const form = multipart({ a: 'b' });
  cases.push(
    { name: 'unknown field', ...json({ ...base, zz_unknown_field: { x: 1 } }) },
    { name: 'deep nesting (10,000 levels)', ...json(`{"zz":${nestedJson(10_000)}}`), dangerous: true },
    { name: 'deep nesting in the base body', ...json(valid.replace(/^\{/, `{"zz":${nestedJson(100)},`)) },
    { name: 'empty body', method, path, headers: { 'content-type': 'application/json' }, body: Buffer.alloc(0) },
    { name: 'empty object', ...json({}) },
    { name: 'array instead of object', ...json([base]) },
    { name: 'JSON scalar', ...json('42') },
    { name: 'not JSON', ...json('this is not json') },
    { name: 'truncated JSON', ...json(valid.slice(0, Math.max(1, valid.length - 3))), dangerous: true },
    { name: 'connection closed mid-body', ...json(valid), abortAfter: Math.floor(valid.length / 2), dangerous: true },
    { name: 'prototype key', ...json(valid.replace(/^\{/, '{"__proto__":{"polluted":true},')) },
    {
      name: 'invalid UTF-8',
      method,
      path,
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from('{"zz":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]),
    },
    {
      name: 'text/plain content type',
      method,
      path,
      headers: { 'content-type': 'text/plain' },
      body: Buffer.from(valid),
      status: 415,
    },
    { name: 'form content type', method, path, headers: { 'content-type': form.type }, body: form.body, status: 415 },
    { name: 'latin1 charset', ...json(valid, { 'content-type': 'application/json; charset=latin1' }), status: 415 },
    { name: 'bad gzip', ...json(valid, { 'content-encoding': 'gzip' }), status: 400 },
    { name: 'bad deflate', ...json(valid, { 'content-encoding': 'deflate' }), status: 400 },
    { name: 'bad br', ...json(valid, { 'content-encoding': 'br' }), status: 400 },
    { name: 'unknown encoding', ...json(valid, { 'content-encoding': 'compress' }), status: 415 },
    {
      name: 'gzip bomb (1 GiB inflated)',
      method,
      path,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipBomb(),
      status: 413,
      dangerous: true,
    },
  );
  return emptyValid ? cases.filter((c) => c.name !== 'empty body' && c.name !== 'empty object') : cases;
}

function multipartCases(method: string, path: string, spec: SweepMultipart): SweepCase[] {
  const fields = spec.fields ?? {};
  const text = { field: spec.fileField, name: 'notes.txt', bytes: Buffer.from('plain text, not media\n') };
  const good = multipart(fields, text);
  const send = (name: string, type: string | undefined, body: Buffer, headers: Record<string, string> = {}) => ({
    name,
    method,
    path,
    headers: { ...(type ? { 'content-type': type } : {}), ...headers },
    body,
  });
  const other = (file: FilePart) => {
    const form = multipart(fields, file);
    return [form.type, form.body] as const;
  };
  const cases: SweepCase[] = [
    send('JSON instead of a form', 'application/json', Buffer.from('{"file":"x"}')),
    send('no content type', undefined, good.body),
    send('form without boundary', 'multipart/form-data', good.body),
    send('garbage under a boundary', good.type, Buffer.from('garbage\r\n\r\nmore garbage')),
    send('form without parts', good.type, Buffer.from(`--${BOUNDARY}--\r\n`)),
    send('file in another field', ...other({ ...text, field: 'zz_other' })),
    send('file part without a filename', ...other({ ...text, name: undefined })),
    send('unsupported file', good.type, good.body),
    send('file name with traversal', ...other({ ...text, name: '../../../etc/passwd\u0000.jpg' })),
    { ...send('compressed form', good.type, zlib.gzipSync(good.body), { 'content-encoding': 'gzip' }), status: 415 },
  ];
  // Cut short at every stage of a file part, under the route's own field and under one it does not read (a part
  // nobody reads still fails when its body is cut: that part once took the process down).
  const file = spec.file ?? text;
  for (const field of [spec.fileField, 'zz_unknown']) {
    const form = multipart(fields, { field, name: file.name, bytes: file.bytes });
    const where = `"${field}" part`;
    const cuts: Array<[string, number]> = [
      ['inside the header of', form.offsets.header + 24],
      ['inside the file of', form.offsets.bytes + Math.floor(file.bytes.length / 2)],
      ['before the closing boundary after', form.offsets.closing],
      ['inside the closing boundary after', form.offsets.closing + 6],
    ];
    for (const [stage, end] of cuts) {
      cases.push({ ...send(`body cut ${stage} a ${where}`, form.type, form.body.subarray(0, end)), dangerous: true });
    }
    cases.push({
      ...send(`connection closed inside the file of a ${where}`, form.type, form.body),
      abortAfter: form.offsets.bytes + Math.floor(file.bytes.length / 2),
      dangerous: true,
    });
  }
  return cases;
}

/**
 * The key cases of an endpoint: its request (the base body, or a small form) without an accepted key. A service with
 * keys answers each 401 before reading the body; health has none (it is open: every case checks it without a key).
 */
function keyCases(endpoint: SweepEndpoint, path: string): SweepCase[] {
  if (endpoint.path === HEALTH_PATH) return [];
  const body = endpoint.body;
  const request: { headers: Record<string, string>; body?: Buffer } =
    body && 'json' in body
      ? { headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(body.json)) }
      : body && 'multipart' in body
        ? (() => {
            const form = multipart(body.multipart.fields ?? {}, {
              field: body.multipart.fileField,
              name: 'notes.txt',
              bytes: Buffer.from('text\n'),
            });
            return { headers: { 'content-type': form.type }, body: form.body };
          })()
        : { headers: {} };
  const withAuthorization = (name: string, authorization?: string): SweepCase => ({
    name,
    method: endpoint.method,
    path,
    ...request,
    headers: { ...request.headers, ...(authorization === undefined ? {} : { authorization }) },
    status: 401,
    keyCase: true,
  });
  return [
    withAuthorization('no Authorization header'),
    withAuthorization('Basic scheme', `Basic ${Buffer.from('argus:not-a-key').toString('base64')}`),
    withAuthorization('wrong key', 'Bearer not-the-key-0123456789abcdef'),
    withAuthorization('bare Bearer', 'Bearer '),
    withAuthorization('10 kB bearer token', `Bearer ${'A'.repeat(10 * 1024)}`),
  ];
}

function endpointCases(endpoint: SweepEndpoint, apiKey?: string): SweepCase[] {
  const path = fillPath(endpoint.path, endpoint.params);
  const cases: SweepCase[] = apiKey ? keyCases(endpoint, path) : [];
  const wrongMethod = ['PUT', 'PATCH', 'DELETE', 'POST', 'GET'].find((m) => !endpoint.allow.includes(m));
  if (wrongMethod) {
    cases.push({ name: `wrong method ${wrongMethod}`, method: wrongMethod, path, status: 405, allow: endpoint.allow });
  }
  for (const name of Object.keys(endpoint.params ?? {})) {
    for (const segment of HOSTILE_SEGMENTS) {
      cases.push({
        name: `hostile :${name} ${segment.slice(0, 32)}`,
        method: endpoint.method,
        path: fillPath(endpoint.path, endpoint.params, [name, segment]),
        ...(endpoint.body && 'json' in endpoint.body
          ? { headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(endpoint.body.json)) }
          : {}),
      });
    }
  }
  if (endpoint.body && 'json' in endpoint.body)
    cases.push(...jsonCases(endpoint.method, path, endpoint.body.json, endpoint.emptyBodyValid ?? false));
  if (endpoint.body && 'multipart' in endpoint.body) {
    cases.push(...multipartCases(endpoint.method, path, endpoint.body.multipart));
  }
  return cases;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Sends the first `c.abortAfter` bytes of the body, declaring all of it, and closes the connection once they left. */
function sendAndAbort(url: URL, c: SweepCase, auth: Record<string, string>): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: c.method,
      path: url.pathname.replace(/\/$/, '') + c.path,
      headers: { ...auth, ...c.headers, 'content-length': String(c.body?.length ?? 0), connection: 'close' },
    });
    // An early answer or a reset is a clean close too: what counts is that the server is still healthy afterwards.
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(c.body!.subarray(0, c.abortAfter), () => req.destroy());
  });
}

function send(agent: http.Agent, url: URL, c: SweepCase, auth: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      agent,
      host: url.hostname,
      port: url.port,
      method: c.method,
      path: url.pathname.replace(/\/$/, '') + c.path,
      headers: { ...auth, ...c.headers, 'content-length': String(c.body?.length ?? 0) },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(c.body);
  });
}

/** Why an answer breaks the rules, or undefined when it keeps them. */
function judge(c: SweepCase, answer: Answer, errorShape: ErrorShape): string | undefined {
  if (answer.status >= 500) return 'server error';
  if (answer.status < 400) return 'accepted';
  if (c.status !== undefined && answer.status !== c.status) return `expected ${c.status}`;
  if (LEAKS.test(answer.body)) return 'leaks a stack trace or an internal path';
  if (!/^application\/json/.test(answer.headers['content-type'] ?? '')) return 'error answer is not JSON';
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return 'error answer is not JSON';
  }
  if (!errorShape(body, answer.status)) return "error answer is not in the service's shape";
  if (c.keyCase && !/^Bearer realm=/.test(answer.headers['www-authenticate'] ?? '')) {
    return `WWW-Authenticate is "${answer.headers['www-authenticate'] ?? ''}", not a Bearer challenge`;
  }
  if (c.allow) {
    const allowed = (answer.headers.allow ?? '').split(/,\s*/);
    if (!c.allow.every((method) => allowed.includes(method))) return `Allow is "${answer.headers.allow ?? ''}"`;
  }
  return undefined;
}

/** Why the service is not healthy, or undefined when every health URL answers 200. */
async function unhealthy(health: string[]): Promise<string | undefined> {
  for (const url of health) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status !== 200) return `${url} answered ${res.status}`;
    } catch (error) {
      return `${url} does not answer (${(error as Error).message}): the process is down`;
    }
  }
  return undefined;
}

/** The service's OpenAPI document, as far as the sweep reads it. */
interface SweptDocument {
  info: { title: string };
  paths: Record<string, Record<string, { requestBody?: unknown }>>;
}

/** `METHOD /path` (`:name` segments) of every operation in the service's OpenAPI document that takes a body. */
function operationsWithBodies(url: URL, doc: SweptDocument): string[] {
  const base = url.pathname.replace(/\/$/, '');
  return Object.entries(doc.paths).flatMap(([oasPath, operations]) =>
    Object.entries(operations)
      .filter(([, operation]) => operation.requestBody !== undefined)
      .map(([method]) => `${method.toUpperCase()} ${oasPath.slice(base.length).replace(/\{([^}]+)\}/g, ':$1')}`),
  );
}

/**
 * Sends every malformed-input case to every endpoint of a service, one request at a time over loopback: wrong types,
 * huge strings, null bytes, unknown fields, deep nesting, empty bodies, non-JSON and truncated JSON, prototype keys,
 * invalid UTF-8, wrong content types and charsets, undecodable, unknown and bomb content codings, broken multipart,
 * forms cut short at every stage of a file part (under the route's field and under one it does not read), parts
 * without a filename, connections closed mid-body, hostile path parameters, wrong methods, and with `apiKey` requests
 * without an accepted key (each answered 401 with a Bearer challenge). Each must be answered 4xx
 * (some with a given status) in the service's error shape, as JSON, without a stack trace or an internal path (an
 * aborted case needs no answer), and after every case each health URL must answer 200. Every operation of the
 * service's `/openapi.json` that takes a body must be among `endpoints` with a body, and every answer must keep that
 * document (checkWireAnswer: a drift fails the test through the contract check). The report lists every case that
 * was not answered as it must be.
 */
export async function malformedSweep(options: SweepOptions): Promise<SweepReport> {
  const url = new URL(options.base);
  const loopback = (u: URL) => ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
  if (![url, ...options.health.map((h) => new URL(h))].every(loopback)) {
    throw new Error('the sweep targets loopback only');
  }
  if (options.health.length === 0) throw new Error('the sweep needs at least one health URL');
  const report: SweepReport = { cases: 0, failures: [] };
  const swept = new Set(options.endpoints.filter((e) => e.body).map((e) => `${e.method} ${e.path}`));
  const doc = (await (await fetch(`${url.origin}/openapi.json`)).json()) as SweptDocument;
  for (const operation of operationsWithBodies(url, doc)) {
    if (!swept.has(operation)) {
      report.failures.push({
        endpoint: operation,
        case: '(coverage)',
        status: 0,
        why: 'takes a body but is not swept',
        body: '',
      });
    }
  }
  if (options.only === 'api-keys' && !options.apiKey) throw new Error('the key cases need the apiKey');
  const auth: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (const endpoint of options.endpoints) {
      const cases = endpointCases(endpoint, options.apiKey).filter(
        (c) =>
          options.only === undefined ||
          (options.only === 'dangerous' && c.dangerous) ||
          (options.only === 'api-keys' && c.keyCase),
      );
      for (const c of cases) {
        report.cases++;
        const name = `${endpoint.method} ${endpoint.path}`;
        const fail = (why: string, status = 0, body = '') =>
          report.failures.push({ endpoint: name, case: c.name, status, why, body: body.slice(0, 300) });
        if (c.abortAfter !== undefined) {
          await sendAndAbort(url, c, c.keyCase ? {} : auth);
        } else {
          try {
            const answer = await send(agent, url, c, c.keyCase ? {} : auth);
            const why = judge(c, answer, options.errorShape);
            // Every answer is also held against the service's document (the test's contract check fails on drift).
            checkWireAnswer(doc.info.title, doc as unknown as Record<string, unknown>, {
              method: c.method,
              urlPath: url.pathname.replace(/\/$/, '') + c.path.split('?')[0],
              status: answer.status,
              contentType: answer.headers['content-type'],
              body: answer.body,
            });
            if (why) fail(why, answer.status, answer.body);
          } catch (error) {
            fail(String(error));
          }
        }
        const down = await unhealthy(options.health);
        if (down) {
          fail(`after this case ${down}`);
          return report;
        }
      }
    }
  } finally {
    agent.destroy();
  }
  return report;
}
