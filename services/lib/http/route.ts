import type Joi from 'joi';
import type Koa from 'koa';
import type { ErrorMapping } from './errors.js';

/** What a handler sees: Koa's context plus the validated request parts. */
export interface RouteState {
  requestId: string;
  /** The matched route's error mapping, for the kit's error rendering. */
  mapError?: ErrorMapping;
  params: Record<string, any>;
  query: Record<string, any>;
  body: any;
}

/** Koa context of a route handler. */
export type RouteContext = Koa.ParameterizedContext<RouteState>;

/** One documented response of a route. */
export interface ResponseSpec {
  description: string;
  schema?: Joi.Schema;
  /** Defaults to application/json. */
  contentType?: string;
}

/**
 * A route: the single source for request validation and the OpenAPI document. `body` is validated for JSON bodies;
 * `multipart` routes read the raw request stream themselves (the kit only documents their form fields).
 */
export interface RouteSpec {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** koa-router path relative to the app's base path, e.g. `/media/:bucket_name`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  request?: {
    params?: Joi.ObjectSchema;
    query?: Joi.ObjectSchema;
    body?: Joi.Schema;
    /**
     * Optional shortcut for the common shape of `body`: returns exactly the value the `body` schema would produce,
     * or undefined to let the schema decide (anything unusual, anything invalid). Only for hot routes, and only with
     * a test that checks it against the schema.
     */
    fastBody?: (body: unknown) => unknown;
    multipart?: Joi.ObjectSchema;
    headers?: Record<string, string>;
  };
  /** Error answers without a schema are documented with the service's error body (ErrorStyle.body). */
  responses: Record<number, ResponseSpec>;
  /** Domain errors this route answers with a status of their own (the app's `mapError` otherwise). */
  mapError?: ErrorMapping;
  handler: (ctx: RouteContext) => Promise<void> | void;
}

/** Identity helper that gives route literals their type. */
export function defineRoute(spec: RouteSpec): RouteSpec {
  return spec;
}
