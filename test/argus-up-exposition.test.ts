import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { multiPoseModelsDir } from '../services/frame-analysis/testing/serve-app.js';
import { SERVICES as REGISTRY } from '../bin/services.js';
import { startArgusUp, type ArgusProcess, type RunningArgusUp } from './support/argus-process.js';
import { checkedFetch } from './support/contract-check.js';
import { gaugeNames, promtoolCheckMetrics, promtoolInstalled } from './support/promtool.js';

/** The services `argus up` starts. */
/** Every service `argus up` starts. */
const SERVICES = Object.keys(REGISTRY);
const CONCURRENT_DISPATCHES = 200;

let up: RunningArgusUp;
let argus: ArgusProcess;
/** Each service's root URL (where /metrics is) in the running process. */
let roots: Record<string, string>;

beforeAll(async () => {
  // Webhook URLs from requests may reach loopback (the closed port below).
  up = await startArgusUp(SERVICES, await multiPoseModelsDir(), { WEBHOOK_URL_ALLOW: '127.0.0.1/32' });
  ({ process: argus, roots } = up);
}, 180_000);

afterAll(() => up?.stop());

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const metricsOf = async (name: string) => {
  const res = await fetch(`${roots[name]}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
};

describe('argus up: what an operator reads', () => {
  it.each(SERVICES)('%s exposes no gauge named like a counter (…_total)', async (name) => {
    expect(gaugeNames(await metricsOf(name)).filter((gauge) => gauge.endsWith('_total'))).toEqual([]);
  });

  (promtoolInstalled() ? it.each(SERVICES) : it.skip.each(SERVICES))(
    `%s passes promtool check metrics${promtoolInstalled() ? '' : ' (skipped: no /usr/bin/promtool; apt-get install prometheus)'}`,
    async (name) => {
      expect(await promtoolCheckMetrics(await metricsOf(name))).toEqual({ code: 0, output: '' });
    },
  );

  // Last: it stops the process to read its whole stderr.
  it(`prints no MaxListenersExceededWarning for ${CONCURRENT_DISPATCHES} concurrent dispatches whose webhook is refused`, async () => {
    const hook = `http://127.0.0.1:${await closedPort()}/hook`;
    const statuses = await Promise.all(
      Array.from({ length: CONCURRENT_DISPATCHES }, async (_, i) => {
        const res = await checkedFetch(`${roots['alert-dispatch']}/api/v1/actions/execute`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            source_id: 'cam-1',
            alert_name: 'intrusion',
            event_id: `evt-${i}`,
            tools: ['trigger_webhook'],
            tool_arguments: { trigger_webhook: { url: hook } },
          }),
        });
        const body = (await res.json()) as { failed_tools?: Array<{ name: string }> };
        return `${res.status} ${body.failed_tools?.map((tool) => tool.name).join(',')}`;
      }),
    );
    expect(new Set(statuses)).toEqual(new Set(['200 trigger_webhook']));
    argus.child.kill('SIGTERM');
    expect(await argus.closed).toEqual({ code: 0, signal: null });
    expect(argus.stderr()).not.toContain('MaxListenersExceededWarning');
  }, 120_000);
});
