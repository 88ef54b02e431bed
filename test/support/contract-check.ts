import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { ObservedResponse, ResponseObserverFactory } from '../../services/lib/http/index.js';

/** A documented response of an operation, as far as the check reads it. */
interface DocumentedResponse {
  content?: Record<string, { schema?: object }>;
}

interface Document {
  paths?: Record<string, Record<string, { responses?: Record<string, DocumentedResponse> }>>;
}

// ajv-formats is CommonJS (`module.exports = formatsPlugin`) typed as an ES default export.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;

/** One ajv for every document. */
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
// OpenAPI's own formats, which say nothing a JSON value could break (number widths, bytes of a file).
for (const format of ['float', 'double', 'int32', 'int64', 'binary', 'byte']) ajv.addFormat(format, true);

/**
 * Validators by schema text: each is compiled once per test file, however many apps (each with its own document) a
 * file creates; compiling is what costs (milliseconds for a large body schema), validating takes microseconds.
 */
const validators = new Map<string, ValidateFunction>();

function validatorOf(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(key, validate);
  }
  return validate;
}

/** Whether a served Content-Type is one the document lists (`image/*` and `*\/*` included). */
function documentedType(types: string[], served: string): string | undefined {
  return types.find(
    (type) => type === served || type === '*/*' || (type.endsWith('/*') && served.startsWith(type.slice(0, -1))),
  );
}

/** What is wrong with one answer by the document; undefined when it conforms. */
function violationOf(doc: Document, response: ObservedResponse): string | undefined {
  const operation = doc.paths?.[response.path]?.[response.method === 'head' ? 'get' : response.method];
  if (!operation) return `${response.method.toUpperCase()} ${response.path} is not in the document`;
  const documented = operation.responses?.[String(response.status)] ?? operation.responses?.default;
  if (!documented) return `status ${response.status} is not documented`;
  if (!response.hasBody || response.method === 'head') return undefined;
  const types = Object.keys(documented.content ?? {});
  if (types.length === 0) return `a ${response.contentType} body is sent, none is documented`;
  const type = documentedType(types, response.contentType);
  if (!type) return `Content-Type ${response.contentType} is not documented (${types.join(', ')})`;
  const schema = documented.content?.[type]?.schema;
  if (!schema || response.json === undefined) return undefined;
  // As sent: JSON drops undefined fields and writes dates as strings.
  const errors = schemaViolations(schema, JSON.parse(JSON.stringify(response.json)));
  return errors.length === 0 ? undefined : `body does not match the schema: ${errors.slice(0, 5).join('; ')}`;
}

/** What is wrong with a JSON value by an OpenAPI schema of a document (`/path message` each); empty when it conforms. */
export function schemaViolations(schema: object, value: unknown): string[] {
  const validate = validatorOf(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim());
}

/** Every answer of every app created while the check is on that broke its document, in order. */
export const contractViolations: string[] = [];

/**
 * The test kit's contract check: each answer an app's API route gives is checked against the app's own OpenAPI
 * document (status documented, Content-Type documented, JSON body valid against its schema). A violation is logged
 * at once and recorded in `contractViolations`, which the jest setup asserts empty after each test.
 */
export const contractCheck: ResponseObserverFactory = (service, openapi) => {
  return (response) => {
    const violation = violationOf(openapi as Document, response);
    if (!violation) return;
    const line = `${service}: ${response.method.toUpperCase()} ${response.path} → ${response.status}: ${violation}`;
    // Logged and recorded once per test: a sweep may repeat the same answer a hundred times.
    if (contractViolations.includes(line)) return;
    console.error(`OpenAPI contract violation: ${line}`);
    contractViolations.push(line);
  };
};

/** One Server-Sent Event as a test client read it: its name (`message` when none), id and parsed JSON data. */
export interface StreamEvent {
  event: string;
  id?: string;
  data: unknown;
}

interface EventStreamDocument extends Document {
  components?: { schemas?: Record<string, object> };
}

/** What is wrong with one event of an operation's 200 event stream by the document; undefined when it conforms. */
function eventViolationOf(doc: EventStreamDocument, method: string, path: string, event: StreamEvent) {
  const media = (doc.paths?.[path]?.[method]?.responses?.['200']?.content ?? {})['text/event-stream'];
  const items = (media?.schema as { items?: { discriminator?: { mapping?: Record<string, string> } } } | undefined)
    ?.items;
  const mapping = items?.discriminator?.mapping;
  if (!mapping) return 'the document describes no events for this stream';
  const ref = mapping[event.event];
  if (!ref) return `event ${event.event} is not among the documented ones (${Object.keys(mapping).join(', ')})`;
  const schema = doc.components?.schemas?.[ref.replace('#/components/schemas/', '')];
  if (!schema) return `${ref} is not in the document`;
  const sent = event.id === undefined ? { event: event.event, data: event.data } : event;
  const errors = schemaViolations(schema, sent);
  return errors.length === 0 ? undefined : `does not match ${ref}: ${errors.slice(0, 5).join('; ')}`;
}

/**
 * Checks one event a test read from an event stream against the service's document (the stream's event schemas),
 * recording a violation as the contract check does for whole answers.
 */
export function checkStreamEvent(
  service: string,
  doc: Record<string, unknown>,
  operation: { method: string; path: string },
  event: StreamEvent,
): void {
  const violation = eventViolationOf(doc as EventStreamDocument, operation.method, operation.path, event);
  if (!violation) return;
  const line = `${service}: ${operation.method.toUpperCase()} ${operation.path} event ${event.event}: ${violation}`;
  if (contractViolations.includes(line)) return;
  console.error(`OpenAPI contract violation: ${line}`);
  contractViolations.push(line);
}

/** An answer read off the wire (a child process, a raw HTTP client): what the kit's observer sees in-process. */
export interface WireAnswer {
  method: string;
  /** The request's URL path, e.g. `/v1/dataprep/media/jobs/job-1`. */
  urlPath: string;
  status: number;
  /** The Content-Type header as sent, parameters included; undefined without one. */
  contentType?: string;
  /** The body as text (an event stream or binary body need not be read: give undefined). */
  body?: string;
}

const templates = new WeakMap<object, Array<{ pattern: RegExp; path: string }>>();

/** The document path (`/media/{bucket_name}`) a URL path falls under, the literal paths first; undefined for none. */
function documentPath(doc: Document, urlPath: string): string | undefined {
  let list = templates.get(doc);
  if (!list) {
    list = Object.keys(doc.paths ?? {})
      .sort((a, b) => a.split('{').length - b.split('{').length)
      .map((path) => ({
        path,
        pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      }));
    templates.set(doc, list);
  }
  return list.find((t) => t.pattern.test(urlPath))?.path;
}

/**
 * Checks an answer read off the wire against the service's document, as the kit's observer does for an in-process
 * app: answers to paths and methods the document does not have (404s of unknown paths, 405s) are not the API's, as
 * in-process; everything else must be documented, its JSON body valid. A violation is recorded like the others.
 */
export function checkWireAnswer(service: string, doc: Record<string, unknown>, answer: WireAnswer): void {
  const path = documentPath(doc as Document, answer.urlPath);
  const method = answer.method.toLowerCase();
  const operations = path ? (doc as Document).paths?.[path] : undefined;
  if (!path || !operations?.[method === 'head' ? 'get' : method]) return;
  const contentType = (answer.contentType ?? '').split(';')[0].trim();
  let json: unknown;
  if (answer.body && /[/+]json$/.test(contentType)) {
    try {
      json = JSON.parse(answer.body);
    } catch {
      json = undefined;
    }
  }
  const observed = {
    method,
    path,
    status: answer.status,
    contentType,
    json,
    hasBody: Boolean(answer.body) || contentType !== '',
  };
  contractCheck(service, doc)(observed);
}

const documents = new Map<string, Promise<Record<string, unknown>>>();

/**
 * A request through `fetcher` for a service running out of process (`argus up`, a container): the answer is checked
 * against the document the service serves at its origin's `/openapi.json` (read once per origin). Event streams and
 * binary bodies are checked by status and Content-Type; JSON bodies are read from a clone, so the caller still reads
 * its own.
 */
export async function checkedRequest(
  fetcher: typeof fetch,
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  const target = new URL(input instanceof Request ? input.url : input);
  let document = documents.get(target.origin);
  if (!document) {
    document = fetcher(`${target.origin}/openapi.json`).then((res) => res.json() as Promise<Record<string, unknown>>);
    documents.set(target.origin, document);
  }
  const doc = await document;
  const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
  const res = await fetcher(input, init);
  const contentType = res.headers.get('content-type') ?? undefined;
  const json = /[/+]json/.test(contentType ?? '');
  checkWireAnswer(String((doc.info as { title?: string }).title), doc, {
    method,
    urlPath: target.pathname,
    status: res.status,
    contentType,
    body: json ? await res.clone().text() : contentType ? '(not read)' : undefined,
  });
  return res;
}

/** `fetch`, its answer checked against the service's document (checkedRequest). */
export const checkedFetch = (url: string, init?: RequestInit): Promise<Response> => checkedRequest(fetch, url, init);
