import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { gaugeNames, promtoolCheckMetrics, promtoolInstalled } from '../../../test/support/promtool.js';
import { createLogger } from '../log/index.js';
import { createHttpApp, listen, statusMessageStyle, type RunningServer } from './index.js';

const logger = createLogger({ service: 'metrics-test', level: 'error', json: true });
logger.silent = true;

let server: RunningServer;
let exposition: string;
beforeAll(async () => {
  const { app } = createHttpApp({
    info: { title: 'metrics', version: '1.0.0' },
    service: 'metrics-test',
    logger,
    errors: statusMessageStyle('failed'),
    routes: [],
    basePath: '/v1/metrics-test',
  });
  server = await listen(app, { port: 0, host: '127.0.0.1', logger, name: 'metrics-test' });
  await (await fetch(`${server.url}/v1/metrics-test/nowhere`)).arrayBuffer();
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  exposition = await res.text();
});
afterAll(() => server.close());

describe('the /metrics exposition of the HTTP kit', () => {
  it('names no gauge like a counter (…_total), and keeps the active handles, requests and resources by type', () => {
    const gauges = gaugeNames(exposition);
    expect(gauges.filter((name) => name.endsWith('_total'))).toEqual([]);
    expect(gauges).toEqual(
      expect.arrayContaining(['nodejs_active_handles', 'nodejs_active_requests', 'nodejs_active_resources']),
    );
    expect(exposition).toMatch(/^nodejs_active_handles\{type="Server",service="metrics-test"\} [1-9]/m);
  });

  (promtoolInstalled() ? it : it.skip)(
    `passes promtool check metrics${promtoolInstalled() ? '' : ' (skipped: no /usr/bin/promtool; apt-get install prometheus)'}`,
    async () => {
      expect(await promtoolCheckMetrics(exposition)).toEqual({ code: 0, output: '' });
    },
  );
});
