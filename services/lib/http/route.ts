import type Joi from 'joi';
import type Koa from 'koa';
import type { ErrorMapping } from './errors.js';

/** A request part the route gives no schema for: the kit validates nothing there, so a handler may read nothing. */
export type Undeclared = Record<never, never>;

/**
 * What a handler sees besides Koa's context: the validated request parts, typed by the route's schemas (`P` path
 * parameters, `Q` query, `B` body).
 */
export interface RouteState<P = unknown, Q = unknown, B = unknown> {
  requestId: string;
  /** The matched route's error mapping, for the kit's error rendering. */
  mapError?: ErrorMapping;
  params: P;
  query: Q;
  body: B;
}

/** Koa context of a route handler; without type arguments its parts are `unknown` (narrow before reading). */
export type RouteContext<P = unknown, Q = unknown, B = unknown> = Koa.ParameterizedContext<RouteState<P, Q, B>>;

/** One documented response of a route. */
export interface ResponseSpec {
  description: string;
  schema?: Joi.Schema;
  /** Defaults to application/json; several when the body's type depends on what is served (each gets `schema`). */
  contentType?: string | readonly string[];
  /**
   * For a `text/event-stream` body: each event's name (`message` for events sent without one) and the schema of its
   * JSON `data`. The document names each as a component and describes the stream as the sequence of them.
   */
  events?: Record<string, Joi.Schema>;
}

/**
 * A route: the single source for request validation, the OpenAPI document and the types its handler reads. `body` is
 * validated for JSON bodies; `multipart` routes read the raw request stream themselves (the kit only documents their
 * form fields).
 */
export interface RouteSpec<P = unknown, Q = unknown, B = unknown> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** koa-router path relative to the app's base path, e.g. `/media/:bucket_name`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  request?: {
    params?: Joi.ObjectSchema<P>;
    query?: Joi.ObjectSchema<Q>;
    body?: Joi.AnySchema<B>;
    /**
     * Optional shortcut for the common shape of `body`: returns exactly the value the `body` schema would produce,
     * or undefined to let the schema decide (anything unusual, anything invalid). Only for hot routes, and only with
     * a test that checks it against the schema.
     */
    fastBody?: (body: unknown) => NoInfer<B> | undefined;
    multipart?: Joi.ObjectSchema;
    headers?: Record<string, string>;
  };
  /** Error answers without a schema are documented with the service's error body (ErrorStyle.body). */
  responses: Record<number, ResponseSpec>;
  /** Domain errors this route answers with a status of their own (the app's `mapError` otherwise). */
  mapError?: ErrorMapping;
  // A method, not a function property: its parameter is then bivariant, so a route typed by its schemas still fits a
  // plain RouteSpec (the app's route list); defineRoute has already checked the handler against its own types.
  handler(ctx: RouteContext<P, Q, B>): Promise<void> | void;
}

/**
 * Checks a route literal against its schemas: the handler's `ctx.state.params`, `query` and `body` get the static
 * types of the `params`, `query` and `body` schemas (`Joi.object<T, true>({...})` ties a schema's keys to `T`), and
 * a part without a schema is `Undeclared`. The result is the plain `RouteSpec` the app lists, so that a contextual
 * `RouteSpec` around the call cannot loosen the handler's types.
 */
export function defineRoute<P = Undeclared, Q = Undeclared, B = Undeclared>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec;
}
