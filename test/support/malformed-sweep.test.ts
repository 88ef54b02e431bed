import { afterEach, describe, expect, it } from '@jest/globals';
import Joi from 'joi';
import {
  createHttpApp,
  defineRoute,
  listen,
  statusMessageStyle,
  type RunningServer,
} from '../../services/lib/http/index.js';
import { createLogger } from '../../services/lib/log/index.js';
import { malformedSweep, type SweepEndpoint, type SweepOptions } from './malformed-sweep.js';

const logger = createLogger({ service: 'sweep-test', level: 'error', json: true });
logger.silent = true;

const isStatusMessage = (body: unknown) => (body as { status?: unknown } | null)?.status === 'error';

/** A service with one JSON endpoint, `POST /things`; `onRequest` runs before validation answers. */
async function serve(onRequest: () => void = () => undefined, apiKeys?: string[]): Promise<RunningServer> {
  const { app } = createHttpApp({
    info: { title: 'Sweep test', version: '1.0.0' },
    service: 'sweep-test',
    logger,
    errors: statusMessageStyle('Unexpected'),
    basePath: '/v1',
    routes: [
      defineRoute({
        method: 'post',
        path: '/things',
        summary: 'Creates a thing',
        request: { body: Joi.object({ name: Joi.string().required() }) },
        responses: { 201: { description: 'created', schema: Joi.object({ name: Joi.string().required() }) } },
        handler: (ctx) => {
          onRequest();
          ctx.status = 201;
          ctx.body = { name: ctx.state.body.name };
        },
      }),
      defineRoute({
        method: 'get',
        path: '/health',
        summary: 'Health',
        responses: { 200: { description: 'healthy', schema: Joi.object({ status: Joi.string() }) } },
        handler: (ctx) => {
          ctx.body = { status: 'ok' };
        },
      }),
    ],
  });
  return listen(app, { port: 0, host: '127.0.0.1', logger, name: 'sweep-test', apiKeys });
}

const THINGS: SweepEndpoint = { method: 'POST', path: '/things', allow: ['POST'], body: { json: { name: 5 } } };

/** The sweep of `server`'s API under `/v1`, in its error shape, its health checked after every case. */
const sweepOf = (server: RunningServer, options: Pick<SweepOptions, 'endpoints'> & Partial<SweepOptions>) =>
  malformedSweep({
    base: `${server.url}/v1`,
    errorShape: isStatusMessage,
    health: [`${server.url}/v1/health`],
    ...options,
  });

describe('the malformed sweep', () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close().catch(() => undefined);
    server = undefined;
  });

  it('reports an endpoint that takes a body (by the OpenAPI document) but is not swept', async () => {
    server = await serve();
    const report = await sweepOf(server, {
      endpoints: [{ method: 'GET', path: '/health', allow: ['GET', 'HEAD'] }],
    });
    expect(report.failures).toContainEqual(
      expect.objectContaining({ endpoint: 'POST /things', why: 'takes a body but is not swept' }),
    );
  });

  it('stops at the first case after which the service no longer answers its health', async () => {
    // A valid body reaches the handler: the service then stops, as a process taken down by a request would.
    let stopping: Promise<void> | undefined;
    server = await serve(() => (stopping ??= server!.close()));
    const report = await sweepOf(server, {
      endpoints: [{ ...THINGS, body: { json: { name: 'valid' } } }],
    });
    await stopping;
    const down = report.failures.filter((f) => /the process is down/.test(f.why));
    expect(down).toHaveLength(1);
    expect(report.failures.at(-1)).toBe(down[0]);
  });

  it('sends the aborted cases without waiting for an answer, and finds the service healthy after them', async () => {
    server = await serve();
    const report = await sweepOf(server, {
      endpoints: [THINGS],
      only: 'dangerous',
    });
    expect(report.failures).toEqual([]);
    // truncated JSON, connection closed mid-body, deep nesting, gzip bomb
    expect(report.cases).toBe(4);
  });

  it('with an API key, finds every case without one answered 401 with a Bearer challenge, and sends it with the others', async () => {
    const key = 'sweep-key-0123456789abcdef';
    server = await serve(undefined, [key]);
    const sweep = (only: 'api-keys' | 'dangerous') =>
      sweepOf(server!, {
        endpoints: [THINGS],
        apiKey: key,
        only,
      });
    const keyCases = await sweep('api-keys');
    expect(keyCases.failures).toEqual([]);
    // no header, Basic, a wrong key, a bare Bearer, a 10 kB token
    expect(keyCases.cases).toBe(5);
    // The other cases carry the key: answered as by a service without keys.
    const dangerous = await sweep('dangerous');
    expect(dangerous.failures).toEqual([]);
    expect(dangerous.cases).toBe(4);
  });

  it('finds a key case that is not refused (a service that forgot its keys)', async () => {
    server = await serve();
    const report = await sweepOf(server, {
      endpoints: [THINGS],
      apiKey: 'sweep-key-0123456789abcdef',
      only: 'api-keys',
    });
    // Its answers are the 400 of the body instead.
    expect(report.failures.map((f) => [f.status, f.why])).toEqual(Array(5).fill([400, 'expected 401']));
  });
});
