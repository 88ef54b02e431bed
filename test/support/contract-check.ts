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
