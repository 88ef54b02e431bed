import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '../log/index.js';
import {
  createHttpApp,
  defineRoute,
  detailStyle,
  HttpError,
  InvalidHttpUrlError,
  listen,
  parseHttpUrl,
  roundMs,
  statusMessageStyle,
  type ErrorMapping,
  type RunningServer,
} from './index.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });
logger.silent = true;

class OutOfStockError extends Error {}
class BackendDownError extends Error {}

const byRoute: ErrorMapping = (error) =>
  error instanceof OutOfStockError ? new HttpError(409, 'sold out') : undefined;
const byApp: ErrorMapping = (error) =>
  error instanceof BackendDownError || error instanceof OutOfStockError
    ? new HttpError(502, 'backend unavailable', { 'Retry-After': '2' })
    : undefined;

const failing = (path: string, error: () => Error, mapError?: ErrorMapping) =>
  defineRoute({
    method: 'get',
    path,
    summary: path,
    responses: {
      200: { description: 'never' },
      409: { description: 'sold out' },
      418: { description: 'a teapot' },
      502: { description: 'backend down' },
    },
    mapError,
    handler: async () => {
      throw error();
    },
  });

describe('http kit error mapping', () => {
  let server: RunningServer;
  let openapi: Record<string, any>;
  beforeAll(async () => {
    const http = createHttpApp({
      info: { title: 'Test API', version: '1.0.0' },
      service: 'test',
      logger,
      errors: detailStyle(),
      mapError: byApp,
      routes: [
        failing('/route-mapped', () => new OutOfStockError('stock table empty'), byRoute),
        failing('/app-mapped', () => new BackendDownError('ECONNREFUSED 10.0.0.7')),
        failing('/unknown', () => new Error('secret internals')),
        failing('/http-error', () => new HttpError(418, 'teapot'), byRoute),
      ],
    });
    openapi = http.openapi;
    server = await listen(http.app, { port: 0, host: '127.0.0.1', logger, name: 'test' });
  });
  afterAll(() => server.close());

  const get = async (path: string) => {
    const res = await fetch(server.url + path);
    return { status: res.status, headers: res.headers, body: await res.json() };
  };

  it("answers a route's domain errors through its own mapping, before the app's", async () => {
    expect(await get('/route-mapped')).toMatchObject({ status: 409, body: { detail: 'sold out' } });
  });

  it("answers other routes' domain errors through the app's mapping, headers included", async () => {
    const res = await get('/app-mapped');
    expect(res).toMatchObject({ status: 502, body: { detail: 'backend unavailable' } });
    expect(res.headers.get('retry-after')).toBe('2');
  });

  it('leaves HttpErrors as they are and hides errors no mapping knows behind a 500', async () => {
    expect(await get('/http-error')).toMatchObject({ status: 418, body: { detail: 'teapot' } });
    expect(await get('/unknown')).toEqual({
      status: 500,
      headers: expect.anything(),
      body: { detail: 'Internal server error' },
    });
  });

  it('documents error answers without a schema with the style body', () => {
    const conflict = openapi.paths['/route-mapped'].get.responses['409'];
    expect(conflict.content['application/json'].schema).toMatchObject({
      type: 'object',
      properties: { detail: { type: 'string' }, errors: { type: 'array' } },
      required: ['detail'],
    });
    expect(openapi.paths['/route-mapped'].get.responses['200'].content).toBeUndefined();
  });
});

describe('ErrorStyle body', () => {
  it('describes exactly what each style renders', () => {
    const issues = [{ loc: ['body', 'name'], msg: 'required', type: 'any.required' }];
    for (const style of [statusMessageStyle('internal'), detailStyle()]) {
      for (const rendered of [style.render(404, 'Not Found'), style.render(style.validationStatus, 'bad', issues)]) {
        expect(style.body.validate(rendered).error).toBeUndefined();
      }
      expect(style.body.validate({ unexpected: true }).error).toBeDefined();
    }
  });
});

describe('parseHttpUrl', () => {
  it('accepts absolute http and https URLs only, naming the field in its errors', () => {
    expect(parseHttpUrl('https://example.org/a?b=1', 'image_url').href).toBe('https://example.org/a?b=1');
    expect(parseHttpUrl('http://127.0.0.1:8080', 'url').port).toBe('8080');
    expect(() => parseHttpUrl('/relative', 'image_url')).toThrow(
      new InvalidHttpUrlError('image_url is not a valid URL'),
    );
    for (const other of ['ftp://host/x', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/plain,x']) {
      expect(() => parseHttpUrl(other, 'webhook url')).toThrow(
        new InvalidHttpUrlError('webhook url must use http or https'),
      );
    }
  });
});

describe('roundMs', () => {
  it('rounds to 0.1 ms', () => {
    expect(roundMs(12.345)).toBe(12.3);
    expect(roundMs(12.35)).toBe(12.4);
    expect(roundMs(0)).toBe(0);
  });
});
