import type Joi from 'joi';
import { sample } from 'openapi-sampler';
import type { ErrorStyle } from './errors.js';
import { BINARY_SCHEMA, toOpenApiSchema, type OpenApiSchema } from './openapi-schema.js';
import type { ResponseSpec, RouteSpec } from './route.js';

/** Title, version and description of a service's OpenAPI document, and what each of its tags groups. */
export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
  /** Tag name → description; every tag a route names is listed in the document, described when named here. */
  tags?: Record<string, string>;
}

/** What the document is built from: the same route specs (and error style) that the app serves and validates with. */
export interface OpenApiSource {
  info: ApiInfo;
  basePath: string;
  routes: RouteSpec[];
  errors: ErrorStyle;
}

/** The path (under the base path) every service answers its health on: open without an API key, for probes. */
export const HEALTH_PATH = '/health';

/** The name of the bearer scheme in `components.securitySchemes`. */
const SECURITY_SCHEME = 'apiKey';

/** The scheme: the services share keys, which a deployment may or may not set. */
const API_KEY_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  description:
    'One of the keys of ARGUS_API_KEYS (or ARGUS_API_KEYS_FILE), sent as `Authorization: Bearer <key>`. A service ' +
    'without keys (the embedded default, on loopback) needs none; with keys, every operation but health answers 401 ' +
    'without one. /metrics, /openapi.json, /docs and /redoc are always open.',
};

const UNAUTHORIZED =
  'No accepted API key: the service has keys and the request sent none, another scheme or a wrong one';

/** The WWW-Authenticate header of a 401. */
const CHALLENGE_HEADER = {
  'WWW-Authenticate': {
    description:
      'The Bearer challenge (RFC 6750): `Bearer realm="argus"`, with `error="invalid_token"` for a wrong key',
    schema: { type: 'string' },
  },
};

/** The OpenAPI version of every document: 3.0.3, the version joi-to-swagger's vocabulary (`nullable`) belongs to. */
export const OPENAPI_VERSION = '3.0.3';

/** Words of a path segment or parameter name (`job_id`, `search-responses`, `openapi.json`). */
const words = (text: string) => text.split(/[^A-Za-z0-9]+/).filter(Boolean);
const capitalised = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * The operation's stable id: the method, then each segment of the route's path (without the base path) in
 * PascalCase, a parameter as `By` + its name: `GET /media/jobs/:job_id` → `getMediaJobsByJobId`, `POST /alerts` →
 * `postAlerts`. It changes only when the method or the path does.
 */
export function operationIdOf(method: string, path: string): string {
  const parts = path
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? ['by', ...words(segment.slice(1))] : words(segment)));
  return method.toLowerCase() + parts.flat().map(capitalised).join('');
}

function parameters(location: 'path' | 'query', schema?: Joi.ObjectSchema) {
  if (!schema) return [];
  const converted = toOpenApiSchema(schema);
  return Object.entries(converted.properties ?? {}).map(([name, s]) => ({
    name,
    in: location,
    required: location === 'path' || (converted.required ?? []).includes(name),
    schema: s,
    description: s.description,
  }));
}

/**
 * The error answers the kit itself gives on a route, besides those the route documents: refusals of the JSON body
 * (request-body.ts), of a compressed multipart body, invalid parameters (the style's validation status), and the
 * 500 any route answers to an unexpected failure.
 */
function kitErrors(route: RouteSpec, style: ErrorStyle): Record<number, string> {
  const req = route.request ?? {};
  const errors: Record<number, string> = {};
  if (req.params || req.query || req.body) errors[style.validationStatus] = 'A request field is invalid';
  if (req.body) {
    errors[400] = 'The body is not JSON (or not an object or array), not valid UTF-8, or was cut short';
    errors[413] = 'The body is larger than the service accepts, as sent or once decoded';
    errors[415] = 'The body is not application/json in UTF-8, or its Content-Encoding is not supported';
    errors[style.validationStatus] = 'A request field is invalid, or the body is nested too deeply';
  }
  if (req.multipart) errors[415] = 'The body is compressed (a multipart body is accepted without Content-Encoding)';
  if (route.path !== HEALTH_PATH) errors[401] = UNAUTHORIZED;
  errors[500] = 'Unexpected failure (the body names no internals)';
  return errors;
}

/** The schema of a body without a joi schema: any JSON value, text for `text/*`, bytes for anything else. */
function rawBodySchema(contentType: string): OpenApiSchema | undefined {
  if (/[/+]json$/.test(contentType)) return undefined;
  return contentType.startsWith('text/') ? { type: 'string' } : BINARY_SCHEMA;
}

/**
 * The example of a media type: the schema's own (a joi `.example()`), else one generated from the schema (every
 * required field, formats and lengths honoured; patterns are not, so a field with a pattern a generic string breaks
 * needs its own example), so that every JSON request body and success answer has one a client or a mock can start
 * from. A test (hack/openapi-examples.test.ts) checks each against its schema.
 */
function exampleOf(schema: OpenApiSchema): unknown {
  if (schema.example !== undefined) return schema.example;
  return sample(schema as Parameters<typeof sample>[0], { skipReadOnly: true, quiet: true });
}

/** A media type object of `schema`, with its example when `exampled` (a request or success body) and it is JSON. */
function mediaOf(type: string, schema: OpenApiSchema | undefined, exampled: boolean): Record<string, unknown> {
  if (!schema) return {};
  return exampled && /[/+]json$/.test(type) ? { schema, example: exampleOf(schema) } : { schema };
}

/** The named schemas of a document (`components.schemas`): one per Server-Sent Event of its streams. */
class NamedSchemas {
  readonly schemas: Record<string, OpenApiSchema> = {};

  /** Names `schema` and answers a reference to it; one name given two different schemas is an error. */
  add(name: string, schema: OpenApiSchema): OpenApiSchema {
    const known = this.schemas[name];
    if (known && JSON.stringify(known) !== JSON.stringify(schema)) {
      throw new Error(`Two different schemas are named ${name}: give the events of one stream other names`);
    }
    this.schemas[name] = schema;
    return { $ref: `#/components/schemas/${name}` };
  }
}

const pascalCase = (text: string) => words(text).map(capitalised).join('');

/**
 * The schema of a `text/event-stream` body with these events: the stream as the sequence of its events, each event a
 * named component `<Name>Event` ({event, id?, data}) whose `data` is the event's JSON, told apart by `event`.
 * OpenAPI 3.0 has no vocabulary for a stream of messages; this is what a reader and a generator can follow.
 */
function eventStreamSchema(events: Record<string, Joi.Schema>, named: NamedSchemas): OpenApiSchema {
  const refs = Object.entries(events).map(([event, data]) => {
    const schema: OpenApiSchema = {
      type: 'object',
      description: `The \`${event}\` event: \`event: ${event}\` (none for \`message\`), its data one line of JSON`,
      required: ['event', 'data'],
      properties: {
        event: { type: 'string', enum: [event] },
        id: { type: 'string', description: 'The event id, where the stream numbers its events (Last-Event-ID)' },
        data: toOpenApiSchema(data),
      },
    };
    return [event, named.add(`${pascalCase(event)}Event`, schema)] as const;
  });
  return {
    type: 'array',
    description:
      'The stream as the sequence of its Server-Sent Events (each item one event: its name, id and JSON data), ' +
      'until the server or the client ends it',
    items: {
      oneOf: refs.map(([, ref]) => ref),
      discriminator: {
        propertyName: 'event',
        mapping: Object.fromEntries(refs.map(([event, ref]) => [event, ref.$ref as string])),
      },
    },
  };
}

function responseObject(spec: ResponseSpec, status: number, named: NamedSchemas): Record<string, unknown> {
  const headers = status === 401 ? { headers: CHALLENGE_HEADER } : {};
  if (!spec.schema && !spec.contentType && !spec.events) return { description: spec.description, ...headers };
  const types = typeof spec.contentType === 'string' ? [spec.contentType] : (spec.contentType ?? ['application/json']);
  const content = Object.fromEntries(
    types.map((type) => {
      if (spec.events && type === 'text/event-stream') return [type, { schema: eventStreamSchema(spec.events, named) }];
      const schema = spec.schema ? toOpenApiSchema(spec.schema) : rawBodySchema(type);
      return [type, mediaOf(type, schema, status < 300)];
    }),
  );
  return { description: spec.description, ...headers, content };
}

/** Every documented answer of a route: its own, then the kit's, error answers without a schema in the error style. */
function responses(route: RouteSpec, style: ErrorStyle, named: NamedSchemas): Record<string, unknown> {
  const specs: Record<number, ResponseSpec> = {};
  for (const [status, description] of Object.entries(kitErrors(route, style))) specs[Number(status)] = { description };
  Object.assign(specs, route.responses);
  return Object.fromEntries(
    Object.entries(specs).map(([status, spec]) => {
      const withBody =
        Number(status) >= 400 && !spec.schema && !spec.contentType ? { ...spec, schema: style.body } : spec;
      return [status, responseObject(withBody, Number(status), named)];
    }),
  );
}

/** A multipart field's joi description, as far as the file encodings read it. */
interface FieldDescription {
  metas?: { contentType?: string }[];
  items?: FieldDescription[];
}

/**
 * The `encoding` of a multipart body: the content types a file field accepts, from `.meta({ swaggerType: 'file',
 * contentType: 'image/jpeg, image/png' })` on the field (or on an array field's items).
 */
function fileEncodings(multipart: Joi.ObjectSchema): Record<string, { contentType: string }> {
  const fields = (multipart.describe() as { keys?: Record<string, FieldDescription> }).keys ?? {};
  const encodings: Record<string, { contentType: string }> = {};
  for (const [name, field] of Object.entries(fields)) {
    const metas = [...(field.metas ?? []), ...(field.items ?? []).flatMap((item) => item.metas ?? [])];
    const contentType = metas.find((meta) => meta.contentType)?.contentType;
    if (contentType) encodings[name] = { contentType };
  }
  return encodings;
}

function requestBody(route: RouteSpec): unknown {
  const req = route.request ?? {};
  if (req.multipart) {
    const encoding = fileEncodings(req.multipart);
    const media = { schema: toOpenApiSchema(req.multipart), ...(Object.keys(encoding).length ? { encoding } : {}) };
    return { required: true, content: { 'multipart/form-data': media } };
  }
  if (req.body) {
    return {
      required: true,
      content: { 'application/json': mediaOf('application/json', toOpenApiSchema(req.body), true) },
    };
  }
  return undefined;
}

function operation(route: RouteSpec, style: ErrorStyle, named: NamedSchemas): Record<string, unknown> {
  const req = route.request ?? {};
  const headerParams = Object.entries(req.headers ?? {}).map(([name, description]) => ({
    name,
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description,
  }));
  const body = requestBody(route);
  return {
    operationId: operationIdOf(route.method, route.path),
    summary: route.summary,
    description: route.description,
    tags: route.tags,
    parameters: [...parameters('path', req.params), ...parameters('query', req.query), ...headerParams],
    ...(body ? { requestBody: body } : {}),
    ...(route.path === HEALTH_PATH ? { security: [] } : {}),
    responses: responses(route, style, named),
  };
}

/**
 * Builds the OpenAPI 3.0.3 document from the same route specs that validate requests: one operation per route, with
 * a stable operationId, every answer the route or the kit gives (errors in the service's error style), the tags
 * described, one server (the origin that serves the document) and the bearer scheme of the API keys: every
 * operation takes a key or none (the keys are the deployment's choice), health none at all.
 */
export function buildOpenApi(source: OpenApiSource): Record<string, unknown> {
  const { info, basePath, routes, errors } = source;
  const { tags: tagDescriptions = {}, ...documentInfo } = info;
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  const named = new NamedSchemas();
  for (const route of routes) {
    const oasPath = (basePath + route.path).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const op = operation(route, errors, named);
    if (operationIds.has(op.operationId as string)) {
      throw new Error(`Two routes have the operationId ${String(op.operationId)}: give one another path`);
    }
    operationIds.add(op.operationId as string);
    paths[oasPath] ??= {};
    paths[oasPath][route.method] = op;
  }
  const tagNames = [...new Set(routes.flatMap((route) => route.tags ?? []))];
  const tags = tagNames.map((name) =>
    tagDescriptions[name] ? { name, description: tagDescriptions[name] } : { name },
  );
  return {
    openapi: OPENAPI_VERSION,
    info: documentInfo,
    servers: [{ url: '/', description: 'The origin that serves this document' }],
    security: [{ [SECURITY_SCHEME]: [] }, {}],
    tags,
    paths,
    components: {
      ...(Object.keys(named.schemas).length > 0 ? { schemas: named.schemas } : {}),
      securitySchemes: { [SECURITY_SCHEME]: API_KEY_SCHEME },
    },
  };
}
