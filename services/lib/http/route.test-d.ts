/*
 * Compile-time checks of defineRoute's types, run by `npm run typecheck` (tsc), not by jest. Each `@ts-expect-error`
 * line must fail to compile: were the kit to lose a check, the directive itself would become the error.
 */
import Joi from 'joi';
import { defineRoute, type RouteSpec } from './route.js';

interface Greeting {
  name: string;
  times?: number;
}

const greetingSchema = Joi.object<Greeting, true>({ name: Joi.string().required(), times: Joi.number().integer() });

const responses = { 200: { description: 'ok' } };

/** Reads `value` as type T; fails to compile when the value's type is not assignable to T. */
function expectType<T>(value: T): T {
  return value;
}

defineRoute({
  method: 'post',
  path: '/greet/:id',
  summary: 'typed parts',
  request: {
    params: Joi.object<{ id: string }, true>({ id: Joi.string().required() }),
    query: Joi.object<{ loud?: boolean }, true>({ loud: Joi.boolean() }),
    body: greetingSchema,
  },
  responses,
  handler: (ctx) => {
    expectType<string>(ctx.state.body.name);
    expectType<number | undefined>(ctx.state.body.times);
    expectType<string>(ctx.state.params.id);
    expectType<boolean | undefined>(ctx.state.query.loud);
    // @ts-expect-error the body schema declares no `surname`
    void ctx.state.body.surname;
    // @ts-expect-error `name` is a string, not a number
    expectType<number>(ctx.state.body.name);
    // @ts-expect-error the params schema declares no `slug`
    void ctx.state.params.slug;
    // @ts-expect-error the query schema declares no `quiet`
    void ctx.state.query.quiet;
  },
});

defineRoute({
  method: 'get',
  path: '/plain',
  summary: 'no schemas',
  responses,
  handler: (ctx) => {
    // @ts-expect-error no body schema: nothing validated to read
    void ctx.state.body.name;
    // @ts-expect-error no query schema
    void ctx.state.query.page;
    // @ts-expect-error no params schema
    void ctx.state.params.id;
  },
});

/** A route list typed as the app takes it must not loosen a handler's types (no inference from the list's type). */
const _inList: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/in-list',
    summary: 'contextually typed',
    request: { body: greetingSchema },
    responses,
    handler: (ctx) => {
      // @ts-expect-error the body schema declares no `surname`
      void ctx.state.body.surname;
      // @ts-expect-error no query schema
      void ctx.state.query.page;
    },
  }),
];

defineRoute({
  method: 'post',
  path: '/fast',
  summary: 'fastBody returns the body type',
  request: {
    body: greetingSchema,
    // @ts-expect-error a fast path must produce the schema's type
    fastBody: () => ({ name: 1 }),
  },
  responses,
  handler: () => {},
});

// A schema whose keys drift from its declared type fails to compile, in both directions and on a value's type.
// @ts-expect-error `times` is declared on Greeting but missing from the schema
Joi.object<Greeting, true>({ name: Joi.string() });
// @ts-expect-error `nickname` is not declared on Greeting
Joi.object<Greeting, true>({ name: Joi.string(), times: Joi.number(), nickname: Joi.string() });
// @ts-expect-error `name` is a string, not a number
Joi.object<Greeting, true>({ name: Joi.number(), times: Joi.number() });
