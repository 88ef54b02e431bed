import Koa from 'koa';
import Router, { type RouterContext } from '@koa/router';
import type { Logger } from '../log/index.js';
import { apiKeysOf, setErrorRenderer } from './api-keys.js';
import { byteSize, DEFAULT_DISCARD_LIMIT_BYTES, DEFAULT_JSON_MAX_DEPTH, describeBodyLimits } from './body-limits.js';
import { docsRouter } from './docs.js';
import type Joi from 'joi';
import { roundMs } from './duration.js';
import { HttpError, type ErrorMapping, type ErrorStyle, type ValidationIssue } from './errors.js';
import { createHttpMetrics, type HttpMetrics } from './metrics.js';
import { buildOpenApi, HEALTH_PATH, type ApiInfo } from './openapi.js';
import { contentCoding, readJsonBody, type JsonBodyLimits } from './request-body.js';
import { assignRequestId } from './request-id.js';
import { ClientGoneError } from './request-signal.js';
import { responseObserverFor, showResponse, type ResponseObserver } from './response-observer.js';
import { reportResponseErrors } from './response-errors.js';
import type { RouteContext, RouteSpec, RouteState } from './route.js';
import { settleUnreadBody } from './unread-body.js';
import { RequestValidationError, validatePart } from './validation.js';

/** Everything a service hands to the kit to become a Koa app. */
export interface HttpAppOptions {
  info: ApiInfo;
  /** Service name used in metrics. */
  service: string;
  logger: Logger;
  errors: ErrorStyle;
  /** Domain errors every route answers with a status of their own, unless the route has its own `mapError`. */
  mapError?: ErrorMapping;
  routes: RouteSpec[];
  /** Prefix of every route path, e.g. `/v1/dataprep`. */
  basePath?: string;
  /** Largest JSON body accepted, as sent and once decoded: bytes, or text such as '1mb' (default 1 MiB). */
  jsonLimit?: string | number;
  /** Deepest nesting of objects and arrays in a JSON body (default DEFAULT_JSON_MAX_DEPTH, 32). */
  jsonMaxDepth?: number;
  /**
   * Unread body bytes dropped before an answer that did not need them, keeping the connection open; longer bodies
   * are answered at once and the connection closed (default DEFAULT_DISCARD_LIMIT_BYTES, 16 MiB).
   */
  discardLimit?: number;
}

/** A service's Koa app, its OpenAPI document and its metrics registry. */
export interface HttpApp {
  app: Koa;
  openapi: Record<string, unknown>;
  metrics: HttpMetrics;
}

/** What the kit reads of a thrown value; anything can be thrown, so every field may be missing. */
type Thrown = Partial<NodeJS.ErrnoException> & { status?: unknown; expose?: boolean };

/** The fields of a thrown value (none for a thrown primitive). */
function thrownFields(error: unknown): Thrown {
  return typeof error === 'object' && error !== null ? (error as Thrown) : {};
}

/** True when `err` is the request stream's own "aborted": the client closed its connection before sending the body. */
function requestCutByClient(ctx: Koa.Context, err: Thrown): boolean {
  return err.code === 'ECONNRESET' && err.syscall === undefined && ctx.req.destroyed && !ctx.req.complete;
}

/**
 * Answers a failed request in the service's error style, after the route's error mapping; unexpected errors are
 * logged and hidden behind a 500.
 */
function renderError(ctx: Koa.Context, error: unknown, logger: Logger, style: ErrorStyle): void {
  const mapError: ErrorMapping | undefined = ctx.state.mapError;
  const err = (!(error instanceof HttpError) && mapError?.(error)) || error;
  const fields = thrownFields(err);
  if (err instanceof RequestValidationError) {
    ctx.status = style.validationStatus;
    ctx.body = style.render(ctx.status, err.message, err.issues);
  } else if (err instanceof HttpError) {
    ctx.status = err.status;
    ctx.set(err.headers);
    ctx.body = style.render(err.status, err.message);
  } else if (typeof fields.status === 'number' && fields.status >= 400 && fields.status < 500) {
    // Other client errors that carry a status (koa's ctx.throw, http-errors): answer them without their internals.
    ctx.status = fields.status;
    const message =
      err instanceof SyntaxError ? 'Invalid JSON body' : fields.expose ? String(fields.message) : 'Invalid request';
    ctx.body = style.render(fields.status, message);
  } else if (err instanceof ClientGoneError || requestCutByClient(ctx, fields)) {
    // Nobody is left to answer: not a fault of the service.
    logger.info('client left before the answer', { requestId: ctx.state.requestId });
    ctx.status = 500;
  } else {
    logger.error('unhandled error', { requestId: ctx.state.requestId, error: fields.message, stack: fields.stack });
    ctx.status = 500;
    ctx.body = style.render(500, style.internalMessage);
  }
}

/** One `http`-level line per request. */
function logAccess(logger: Logger, ctx: Koa.Context, ms: number): void {
  logger.http('request', {
    requestId: ctx.state.requestId,
    method: ctx.method,
    path: ctx.path,
    status: ctx.status,
    duration_ms: roundMs(ms),
  });
}

/** Validates one part, adding its issues to `issues` (value undefined then) instead of throwing them. */
function checkPart(
  issues: ValidationIssue[],
  part: 'path' | 'query' | 'body',
  schema: Joi.AnySchema<unknown> | undefined,
  value: unknown,
): unknown {
  if (!schema) return value;
  try {
    return validatePart(part, schema, value);
  } catch (err) {
    if (!(err instanceof RequestValidationError)) throw err;
    issues.push(...err.issues);
    return undefined;
  }
}

/** The request with the JSON body the kit read for a route with a `body` schema (Koa has no field of its own). */
type JsonRequest = Koa.Request & { body?: unknown };

function routeMiddleware(route: RouteSpec, json: JsonBodyLimits, appMapError?: ErrorMapping): Koa.Middleware[] {
  const req = route.request ?? {};
  const mapError = route.mapError ?? appMapError;
  const chain: Koa.Middleware[] = [];
  if (req.body) {
    chain.push(async (ctx, next) => {
      (ctx.request as JsonRequest).body = await readJsonBody(ctx, json);
      return next();
    });
  } else if (req.multipart) {
    // Multipart routes stream the raw body themselves: a compressed one would only reach them as a malformed form.
    chain.push((ctx, next) => {
      contentCoding(ctx.req, []);
      return next();
    });
  }
  // Validation and handler in one plain (non-async) middleware: koa-compose turns a synchronous throw into a
  // rejection, and each extra async layer costs microtask turns per request.
  chain.push((ctx) => {
    // The parts as validated: the route's schemas give them the types its handler reads (see defineRoute).
    const state = ctx.state as RouteState<unknown, unknown, unknown>;
    if (mapError) state.mapError = mapError;
    const params = (ctx as Partial<Pick<RouterContext, 'params'>>).params ?? {};
    const issues: ValidationIssue[] = [];
    // Every part is checked before answering, so one 4xx names every invalid field.
    state.params = checkPart(issues, 'path', req.params, params);
    state.query = req.query ? checkPart(issues, 'query', req.query, { ...ctx.query }) : ctx.query;
    const body = (ctx.request as JsonRequest).body ?? {};
    state.body = req.fastBody?.(body) ?? checkPart(issues, 'body', req.body, body);
    if (issues.length > 0) throw new RequestValidationError(issues);
    return route.handler(ctx as RouteContext);
  });
  return chain;
}

/** Prefixes of `/metrics`, `/openapi.json`, `/docs*` and `/redoc*` (the router matches case-insensitively). */
const OPS_PATH = /^\/(?:metrics|openapi\.json|docs|redoc)/i;

/** The health route's path under the base path, as the router matches it: any case, a trailing slash or none. */
const isHealthPath = (path: string, healthPath: string) => path.replace(/\/$/, '').toLowerCase() === healthPath;

/**
 * Refuses (401) an API request without an accepted key when the app requires keys (listen's `apiKeys`). The
 * operations and docs paths and the health route stay open: probes and scrapers carry no key, and the document
 * describes the API, not its data.
 */
function authorize(ctx: Koa.Context, healthPath: string): void {
  const keys = apiKeysOf(ctx.app);
  if (!keys || isHealthPath(ctx.path, healthPath)) return;
  const authorization = ctx.get('authorization') || undefined;
  if (!keys.accepts(authorization)) throw keys.refusal(authorization);
}

/**
 * What happens around every request, as one Koa layer (each layer costs on every request): a request id; the
 * operations and docs router for their path prefixes, else (and for what it does not answer) the API key check and the
 * API routes; errors (and unmatched paths) answered in the service's style; the answer shown to the response observer, when the app has one (the test kit's contract
 * check); then the metrics observation and the access log line, with the final status.
 */
function requestEnvelope(
  healthPath: string,
  logger: Logger,
  style: ErrorStyle,
  metrics: HttpMetrics,
  ops: Koa.Middleware,
  discardLimit: number,
  observed?: { apiPaths: ReadonlySet<string>; observe: ResponseObserver },
): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    assignRequestId(ctx);
    try {
      // What the operations router does not answer reaches the API routes only through the key check.
      const api = () => {
        authorize(ctx, healthPath);
        return next();
      };
      await (OPS_PATH.test(ctx.path) ? ops(ctx, api) : api());
      // Unmatched paths (404) and the router's 405 (with Allow) and 501 come without a body: Koa would answer text.
      if (ctx.status >= 400 && ctx.body == null && ctx.respond !== false) {
        throw new HttpError(ctx.status, ctx.message);
      }
    } catch (err) {
      renderError(ctx, err, logger, style);
    }
    await settleUnreadBody(ctx, discardLimit);
    if (observed) showResponse(ctx, observed.apiPaths, observed.observe);
    const ms = performance.now() - started;
    metrics.observe(ctx, ms / 1000);
    // winston formats a line even when its level is filtered out: skip the work on the hot path.
    if (logger.isLevelEnabled('http')) logAccess(logger, ctx, ms);
  };
}

/**
 * Builds a service's Koa app: request ids, access log, contract-shaped errors, Prometheus `/metrics`,
 * `/openapi.json` + `/docs` + `/redoc` generated from the route specs, and joi validation at the edge.
 */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const basePath = options.basePath ?? '';
  const json: JsonBodyLimits = {
    maxBytes: byteSize(options.jsonLimit ?? '1mb'),
    maxDepth: options.jsonMaxDepth ?? DEFAULT_JSON_MAX_DEPTH,
  };
  const discardLimit = options.discardLimit ?? DEFAULT_DISCARD_LIMIT_BYTES;
  const limits = describeBodyLimits(json.maxBytes, json.maxDepth, discardLimit);
  const info = { ...options.info, description: [options.info.description, limits].filter(Boolean).join('\n\n') };
  const openapi = buildOpenApi({ info, basePath, routes: options.routes, errors: options.errors });
  const metrics = createHttpMetrics(options.service);
  const app = new Koa();
  app.proxy = true;
  app.silent = true;
  reportResponseErrors(app, options.logger, metrics.registry);

  const router = new Router({ prefix: basePath || undefined });
  for (const route of options.routes) {
    router.register(route.path, [route.method.toUpperCase()], routeMiddleware(route, json, options.mapError));
  }
  const ops = docsRouter(options.info.title, openapi);
  ops.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  const opsRoutes = ops.routes() as unknown as Koa.Middleware;

  const observe = responseObserverFor(options.service, openapi);
  const apiPaths = new Set(options.routes.map((route) => basePath + route.path));
  const observed = observe && { apiPaths, observe };
  setErrorRenderer(app, (status, message) => options.errors.render(status, message));
  const healthPath = (basePath + HEALTH_PATH).toLowerCase();
  app.use(requestEnvelope(healthPath, options.logger, options.errors, metrics, opsRoutes, discardLimit, observed));
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return { app, openapi, metrics };
}
