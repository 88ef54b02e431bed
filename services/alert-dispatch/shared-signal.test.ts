import { serveDispatch } from './testing/serve-dispatch.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { watchAbortListeners, type AbortListenerWatch } from '../../test/support/abort-listeners.js';
import type { RunningServer } from '../lib/http/index.js';
import { createLogger } from '../lib/log/index.js';
import { AllowList } from '../lib/outbound/index.js';
import type { Dispatcher } from './dispatch/dispatcher.js';
import { timerSleep, type RetryPolicy, type Sleep } from './dispatch/run-tool.js';
import { SubscriptionStore } from './subscriptions/subscription-store.js';
import { ToolRegistry } from './tools/registry.js';
import { triggerWebhookTool } from './tools/trigger-webhook.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });
logger.silent = true;

const CONCURRENT = 200;

/** A loopback port nothing listens on: the webhook's connection is refused at once. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The real timer sleep, entered by every dispatch at once: each back-off waits until all CONCURRENT dispatches
 * reached theirs, so every one of them is backing off (and listening for the shutdown) at the same moment, whatever
 * the scheduling.
 */
function barrierSleep(parties: number): Sleep {
  let arrived = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return async (ms, signal) => {
    if (++arrived === parties) open();
    await gate;
    return timerSleep(ms, signal);
  };
}

describe('alert dispatch under many concurrent failing dispatches', () => {
  let server: RunningServer;
  let dispatcher: Dispatcher;
  let watch: AbortListenerWatch;
  let hookUrl: string;

  beforeAll(async () => {
    hookUrl = `http://127.0.0.1:${await closedPort()}/hook`;
    const policy: RetryPolicy = {
      timeoutMs: 30_000,
      maxAttempts: 2,
      baseDelayMs: 1,
      maxDelayMs: 1,
      sleep: barrierSleep(CONCURRENT),
    };
    const subscriptions = new SubscriptionStore(undefined, logger);
    const registry = new ToolRegistry([triggerWebhookTool({ allow: AllowList.parse('127.0.0.1/32') })]);
    ({ server, dispatcher } = await serveDispatch({
      logger,
      registry,
      subscriptions,
      policy,
      name: 'alert-dispatch-signal-test',
    }));
    watch = watchAbortListeners(dispatcher.signal);
  });
  afterAll(async () => {
    watch.stop();
    await server.close();
  });

  it(`${CONCURRENT} concurrent executes whose webhook is refused add no listener per dispatch to the shutdown signal`, async () => {
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, async (_, i) => {
        const res = await fetch(`${server.url}/api/v1/actions/execute`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            source_id: 'cam-1',
            alert_name: 'intrusion',
            event_id: `evt-${i}`,
            tools: ['trigger_webhook'],
            tool_arguments: { trigger_webhook: { url: hookUrl } },
          }),
        });
        return { status: res.status, body: (await res.json()) as { failed_tools: Array<{ error: string }> } };
      }),
    );
    for (const { status, body } of answers) {
      expect(status).toBe(200);
      expect(body.failed_tools).toEqual([
        { name: 'trigger_webhook', error: expect.stringMatching(/^webhook unreachable: .*ECONNREFUSED/) },
      ]);
    }
    // Every dispatch was in flight at once (the barrier), yet the shutdown signal never carried more than one
    // listener for all of them, Node never warned, and the count is back where it was.
    expect({ peak: watch.peak - watch.baseline, warned: watch.warned(), now: watch.current() }).toEqual({
      peak: 1,
      warned: false,
      now: watch.baseline,
    });
  });
});
