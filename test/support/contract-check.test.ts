import { describe, expect, it } from '@jest/globals';
import Joi from 'joi';
import { createLogger } from '../../services/lib/log/index.js';
import { createHttpApp, defineRoute, detailStyle, listen } from '../../services/lib/http/index.js';
import { checkWireAnswer, contractCheck, contractViolations } from './contract-check.js';

const logger = createLogger({ service: 'contract-check-test', level: 'error', json: true });

/** A document with one route that answers 200 `{count: integer}` as JSON, or 404 in the error style. */
const { openapi } = createHttpApp({
  info: { title: 'T', version: '1' },
  service: 'contract-check-test',
  logger,
  errors: detailStyle(),
  basePath: '/api',
  routes: [
    defineRoute({
      method: 'get',
      path: '/things/:id',
      summary: 'a thing',
      request: { params: Joi.object({ id: Joi.string() }) },
      responses: {
        200: { description: 'the thing', schema: Joi.object({ count: Joi.number().integer().required() }) },
        404: { description: 'no such thing' },
      },
      handler: (ctx) => {
        ctx.body = ctx.state.params.id === 'drift' ? { count: 'many' } : { count: 1 };
      },
    }),
  ],
});

const observe = contractCheck('contract-check-test', openapi);
const answer = (status: number, json: unknown, contentType = 'application/json') =>
  observe({ method: 'get', path: '/api/things/{id}', status, contentType, json, hasBody: true });

/** The violations recorded so far, taken away: the shared setup fails a test that leaves any. */
const takeViolations = () => contractViolations.splice(0);

describe('contract check', () => {
  it('passes answers that follow the document', () => {
    answer(200, { count: 3 });
    answer(404, { detail: 'no such thing' });
    expect(takeViolations()).toEqual([]);
  });

  it('records an undocumented status, Content-Type or body, once each', () => {
    answer(409, { detail: 'conflict' });
    answer(200, { count: 3 }, 'text/plain');
    answer(200, { count: 'many' });
    answer(200, { count: 'many' });
    expect(takeViolations()).toEqual([
      'contract-check-test: GET /api/things/{id} → 409: status 409 is not documented',
      'contract-check-test: GET /api/things/{id} → 200: Content-Type text/plain is not documented (application/json)',
      'contract-check-test: GET /api/things/{id} → 200: body does not match the schema: /count must be integer',
    ]);
  });

  it("sees a served app's answers when the shared setup has it observe them", async () => {
    const { app } = createHttpApp({
      info: { title: 'T', version: '1' },
      service: 'served',
      logger,
      errors: detailStyle(),
      basePath: '/api',
      routes: [
        defineRoute({
          method: 'get',
          path: '/drift',
          summary: 'answers what it does not document',
          responses: { 200: { description: 'a count', schema: Joi.object({ count: Joi.number() }) } },
          handler: (ctx) => {
            ctx.body = { count: 'many' };
          },
        }),
      ],
    });
    const server = await listen(app, { port: 0, host: '127.0.0.1', logger, name: 'served' });
    try {
      await (await fetch(`${server.url}/api/drift`)).json();
      await (await fetch(`${server.url}/metrics`)).text();
    } finally {
      await server.close();
    }
    expect(takeViolations()).toEqual([
      'served: GET /api/drift → 200: body does not match the schema: /count must be number',
    ]);
  });

  it('holds answers read off the wire to the document, leaving alone paths and methods it does not have', () => {
    const wire = (urlPath: string, status: number, body?: string, method = 'GET') =>
      checkWireAnswer('wire', openapi, { method, urlPath, status, contentType: 'application/json', body });
    wire('/api/things/a%2fb', 200, '{"count":2}');
    wire('/api/nowhere', 404, '{"detail":"Not Found"}');
    wire('/api/things/a', 405, '{"detail":"Method Not Allowed"}', 'DELETE');
    expect(takeViolations()).toEqual([]);
    wire('/api/things/a', 200, '{"count":"many"}');
    wire('/api/things/a', 418, '{"detail":"teapot"}');
    expect(takeViolations()).toEqual([
      'wire: GET /api/things/{id} → 200: body does not match the schema: /count must be integer',
      'wire: GET /api/things/{id} → 418: status 418 is not documented',
    ]);
  });
});
