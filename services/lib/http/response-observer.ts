import type Koa from 'koa';

/** One answer of an API route, as the kit hands it to a response observer once it is settled. */
export interface ObservedResponse {
  method: string;
  /** The route's path in the OpenAPI document (`/v1/dataprep/media/{bucket_name}`). */
  path: string;
  status: number;
  /** The Content-Type without parameters; empty when there is no body. */
  contentType: string;
  /** The body as the handler set it: a value that is sent as JSON; undefined for streams, buffers and no body. */
  json: unknown;
  /** Whether a body is sent at all (a stream or buffer included). */
  hasBody: boolean;
}

/** Looks at every answer of one app; made once per app from its OpenAPI document. */
export type ResponseObserver = (response: ObservedResponse) => void;

/** Makes the observer of an app from its service name and OpenAPI document. */
export type ResponseObserverFactory = (service: string, openapi: Record<string, unknown>) => ResponseObserver;

let observerFactory: ResponseObserverFactory | undefined;

/**
 * Has every app created from now on show each answer of its API routes to an observer made from the app's own OpenAPI
 * document (undefined: none, the default). For the test kit's contract check: an app created while none is set costs
 * nothing per request.
 */
export function observeResponses(factory: ResponseObserverFactory | undefined): void {
  observerFactory = factory;
}

/** The observer for a new app, when one is asked for. */
export function responseObserverFor(service: string, openapi: Record<string, unknown>): ResponseObserver | undefined {
  return observerFactory?.(service, openapi);
}

/** The router's note of the route a request matched (see metrics.ts). */
type MatchedContext = Koa.Context & { _matchedRoute?: string };

const isSentAsJson = (body: unknown) =>
  body !== null &&
  typeof body === 'object' &&
  !Buffer.isBuffer(body) &&
  typeof (body as { pipe?: unknown }).pipe !== 'function';

/** Shows a settled answer to `observe` when it came from one of the app's API routes (not /metrics, /docs, a 404). */
export function showResponse(ctx: Koa.Context, apiPaths: ReadonlySet<string>, observe: ResponseObserver): void {
  const matched = (ctx as MatchedContext)._matchedRoute;
  if (matched === undefined || !apiPaths.has(matched) || ctx.respond === false) return;
  const body: unknown = ctx.body;
  observe({
    method: ctx.method.toLowerCase(),
    path: matched.replace(/:([A-Za-z0-9_]+)/g, '{$1}'),
    status: ctx.status,
    contentType: body == null ? '' : ctx.response.type,
    json: isSentAsJson(body) ? body : undefined,
    hasBody: body != null,
  });
}
