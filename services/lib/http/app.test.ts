import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Joi from 'joi';
import { createLogger } from '../log/index.js';
import { captureLogs, logsWritten } from '../../../test/support/logs.js';
import {
  ClientGoneError,
  createHttpApp,
  defineRoute,
  detailStyle,
  HttpError,
  listen,
  statusMessageStyle,
} from './index.js';
import type { RouteSpec, RunningServer } from './index.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });

const routes = [
  defineRoute({
    method: 'post',
    path: '/items/:id',
    summary: 'Create an item',
    request: {
      params: Joi.object({
        id: Joi.string()
          .pattern(/^[a-z]+$/)
          .required(),
      }),
      query: Joi.object({ n: Joi.number().integer().min(1).max(5).default(2) }),
      body: Joi.object({ name: Joi.string().min(1).required() }),
    },
    responses: {
      201: { description: 'created', schema: Joi.object({ id: Joi.string(), n: Joi.number(), name: Joi.string() }) },
    },
    handler: (ctx) => {
      ctx.status = 201;
      ctx.body = { id: ctx.state.params.id, n: ctx.state.query.n, name: ctx.state.body.name };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/boom',
    summary: 'Fails unexpectedly',
    responses: { 200: { description: 'never' } },
    handler: () => {
      throw new Error('secret internals at /etc/passwd');
    },
  }),
  defineRoute({
    method: 'get',
    path: '/teapot',
    summary: 'Fails on purpose',
    responses: { 418: { description: 'always' } },
    handler: () => {
      throw new HttpError(418, 'short and stout', { 'Retry-After': '3' });
    },
  }),
];

describe('http kit with the {status,message} style', () => {
  let server: RunningServer;
  beforeAll(async () => {
    const { app } = createHttpApp({
      info: { title: 'Test API', version: '1.0.0' },
      service: 'test',
      logger,
      errors: statusMessageStyle('Some error ocurred at API server. Please try later!'),
      routes,
      basePath: '/v1/test',
    });
    server = await listen(app, { port: 0, host: '127.0.0.1', logger, name: 'test' });
  });
  afterAll(() => server.close());

  const post = (path: string, body: string) =>
    fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('validates params, query and body and applies defaults', async () => {
    const res = await post('/v1/test/items/abc', JSON.stringify({ name: 'x' }));
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ id: 'abc', n: 2, name: 'x' });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 400 in the service style naming every invalid field', async () => {
    const res = await post('/v1/test/items/ABC?n=9', JSON.stringify({}));
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.status).toBe('error');
    expect(body.message).toContain('path.id');
    expect(body.message).toContain('query.n');
    expect(body.message).toContain('body.name');
  });

  it('answers 400 for malformed JSON', async () => {
    const res = await post('/v1/test/items/abc', '{nope');
    expect(res.status).toBe(400);
    expect((await res.json()).status).toBe('error');
  });

  it('hides unexpected errors behind the fixed message', async () => {
    const res = await fetch(server.url + '/v1/test/boom');
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      status: 'error',
      message: 'Some error ocurred at API server. Please try later!',
    });
  });

  it('renders HttpError with its status and headers', async () => {
    const res = await fetch(server.url + '/v1/test/teapot');
    expect(res.status).toBe(418);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(await res.json()).toEqual({ status: 'error', message: 'short and stout' });
  });

  it('renders unknown paths as 404 in the service style', async () => {
    const res = await fetch(server.url + '/v1/test/nothing');
    expect(res.status).toBe(404);
    expect((await res.json()).status).toBe('error');
  });

  it('keeps a safe incoming request id', async () => {
    const res = await fetch(server.url + '/v1/test/teapot', { headers: { 'x-request-id': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
  });

  it('serves an OpenAPI document generated from the route schemas', async () => {
    const doc = await (await fetch(server.url + '/openapi.json')).json();
    const op = doc.paths['/v1/test/items/{id}'].post;
    expect(op.summary).toBe('Create an item');
    expect(op.parameters.map((p: any) => `${p.in}:${p.name}`)).toEqual(['path:id', 'query:n']);
    expect(op.requestBody.content['application/json'].schema.required).toEqual(['name']);
    expect(op.parameters[1].schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 5 });
  });

  it('serves Swagger UI and Redoc from local assets', async () => {
    const docs = await fetch(server.url + '/docs');
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(html).toContain('/openapi.json');
    const bundle = await fetch(server.url + '/docs/assets/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    const redoc = await fetch(server.url + '/redoc');
    expect(await redoc.text()).toContain('spec-url="/openapi.json"');
    const redocJs = await fetch(server.url + '/redoc/redoc.standalone.js');
    expect(redocJs.status).toBe(200);
    await redocJs.arrayBuffer();
  });

  it('exports Prometheus metrics including the request histogram', async () => {
    await fetch(server.url + '/v1/test/teapot');
    const text = await (await fetch(server.url + '/metrics')).text();
    expect(text).toContain(
      'http_request_duration_seconds_count{service="test",method="GET",route="/v1/test/teapot",status="418"',
    );
    expect(text).toContain('process_cpu_user_seconds_total');
  });
});

/** Serves `routes` with the {detail} error style on a loopback port for the duration of `use`. */
async function withDetailApp(
  routes: RouteSpec[],
  use: (post: (path: string, body: string) => Promise<Response>) => Promise<void>,
) {
  const { app } = createHttpApp({
    info: { title: 'T', version: '1' },
    service: 'detail',
    logger,
    errors: detailStyle(),
    routes,
  });
  const server = await listen(app, { port: 0, host: '127.0.0.1', logger, name: 'detail' });
  try {
    await use((path, body) =>
      fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
    );
  } finally {
    await server.close();
  }
}

describe('http kit with the {detail} style', () => {
  it('answers validation failures with 422 and per-field errors', async () => {
    await withDetailApp([routes[0]], async (post) => {
      const res = await post('/items/abc', '{"name": 3}');
      expect(res.status).toBe(422);
      const body = await res.json();
      expect(body.errors).toEqual([{ loc: ['body', 'name'], msg: 'name must be a string', type: 'string.base' }]);
    });
  });

  it('uses a route’s fastBody value when it gives one and the joi schema otherwise', async () => {
    const echo = defineRoute({
      method: 'post',
      path: '/echo',
      summary: 'Echo the validated body',
      request: {
        body: Joi.object({ name: Joi.string().required(), via: Joi.string().default('schema') }),
        fastBody: (body: any) => (body?.name === 'quick' ? { name: 'quick', via: 'fast path' } : undefined),
      },
      responses: {
        200: { description: 'the body', schema: Joi.object({ name: Joi.string(), via: Joi.string() }) },
      },
      handler: (ctx) => {
        ctx.body = ctx.state.body;
      },
    });
    await withDetailApp([echo], async (post) => {
      const echoed = async (body: unknown) => (await post('/echo', JSON.stringify(body))).json();
      expect(await echoed({ name: 'quick' })).toEqual({ name: 'quick', via: 'fast path' });
      expect(await echoed({ name: 'slow' })).toEqual({ name: 'slow', via: 'schema' });
      const invalid = await post('/echo', JSON.stringify({ name: 5 }));
      expect(invalid.status).toBe(422);
      expect((await invalid.json()).errors[0].loc).toEqual(['body', 'name']);
    });
  });
});

describe('http kit access log', () => {
  it('writes one http-level line per request with its id, route, status and duration', async () => {
    const { logger: httpLogger, lines } = captureLogs({ service: 'acc', level: 'http' });
    const { app } = createHttpApp({
      info: { title: 'T', version: '1' },
      service: 'acc',
      logger: httpLogger,
      errors: detailStyle(),
      routes,
    });
    const server = await listen(app, { port: 0, host: '127.0.0.1', logger: httpLogger, name: 'acc' });
    try {
      await fetch(server.url + '/teapot', { headers: { 'x-request-id': 'req-42' } });
      await logsWritten();
      expect(lines().filter((l) => l.message === 'request')).toEqual([
        expect.objectContaining({
          level: 'http',
          requestId: 'req-42',
          method: 'GET',
          path: '/teapot',
          status: 418,
          duration_ms: expect.any(Number),
        }),
      ]);
    } finally {
      await server.close();
    }
  });
  it('logs a client that left as such, not as an unhandled error', async () => {
    const { logger: quiet, lines } = captureLogs({ service: 'gone', level: 'info' });
    const leaving = defineRoute({
      method: 'get',
      path: '/gone',
      summary: 'The client left while it was answered',
      responses: { 200: { description: 'never' } },
      handler: () => {
        throw new ClientGoneError();
      },
    });
    const { app } = createHttpApp({
      info: { title: 'T', version: '1' },
      service: 'gone',
      logger: quiet,
      errors: detailStyle(),
      routes: [leaving],
    });
    const server = await listen(app, { port: 0, host: '127.0.0.1', logger: quiet, name: 'gone' });
    try {
      await fetch(server.url + '/gone', { headers: { 'x-request-id': 'req-gone' } });
      await logsWritten();
      const logged = lines();
      expect(logged).toContainEqual(
        expect.objectContaining({ level: 'info', message: 'client left before the answer', requestId: 'req-gone' }),
      );
      expect(logged.filter((l) => l.message === 'unhandled error')).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
