import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { createLogger } from '../../lib/log/index.js';
import { actionRequest } from '../testing/action-request.js';
import { startWebhookReceiver, type WebhookReceiver } from '../testing/webhook-receiver.js';
import { logAlertTool } from '../tools/log-alert.js';
import { ToolRegistry } from '../tools/registry.js';
import { triggerWebhookTool } from '../tools/trigger-webhook.js';
import { DedupStore } from './dedup.js';
import { Dispatcher } from './dispatcher.js';
import type { ActionRequest, DedupSpec, DispatchResult } from './types.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });
const DEDUP: DedupSpec = {
  enabled: true,
  strategy: 'field_hash',
  fields: ['source_id'],
  window_seconds: 60,
  on_missing: 'skip',
};

describe('Dispatcher failure paths (real webhook tool against a real receiver)', () => {
  let hook: WebhookReceiver;
  let dispatcher: Dispatcher;

  beforeAll(async () => {
    hook = await startWebhookReceiver();
  });
  afterAll(() => hook.close());
  beforeEach(() => {
    // The real timer sleep (no `sleep` in the policy): its abort listener is what must not leak.
    dispatcher = new Dispatcher({
      registry: new ToolRegistry([logAlertTool(), triggerWebhookTool({ defaultUrl: hook.url })]),
      subscriptions: { find: () => undefined },
      dedup: new DedupStore(Date.now),
      events: { publish: () => undefined },
      logger,
      policy: { timeoutMs: 5000, maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });
  });

  const alert = (over: Partial<ActionRequest> = {}) => actionRequest({ tools: ['trigger_webhook'], ...over });

  it('leaves the shutdown signal with the listeners it had after 1,000 dispatches that failed after a back-off', async () => {
    const before = getEventListeners(dispatcher.signal, 'abort').length;
    const received = hook.received.length;
    for (let i = 0; i < 2000; i++) hook.script.push({ status: 503 });
    const results: DispatchResult[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const runs = Array.from({ length: 50 }, (_, i) => dispatcher.dispatch(alert({ event_id: `e${batch}-${i}` })));
      results.push(...(await Promise.all(runs)));
    }
    // Every dispatch failed twice, so each one slept through a back-off on the shutdown signal in between.
    expect(hook.received.length - received).toBe(2000);
    expect(results.every((r) => r.failed_tools[0]?.error === 'webhook answered 503')).toBe(true);
    expect(getEventListeners(dispatcher.signal, 'abort')).toHaveLength(before);
  });

  it('does not suppress the retry of an alert whose every tool failed; a delivered one suppresses the next', async () => {
    hook.script.push({ status: 500 }, { status: 500 });
    const failed = await dispatcher.dispatch(alert({ event_id: 'a1', dedup: DEDUP }));
    expect(failed).toMatchObject({ actions_taken: [], suppressed: null });
    expect(failed.failed_tools).toEqual([{ name: 'trigger_webhook', error: 'webhook answered 500' }]);

    const retry = await dispatcher.dispatch(alert({ event_id: 'a2', dedup: DEDUP }));
    expect(retry).toMatchObject({ actions_taken: ['trigger_webhook'], suppressed: null });
    const repeat = await dispatcher.dispatch(alert({ event_id: 'a3', dedup: DEDUP }));
    expect(repeat).toMatchObject({ actions_taken: [], suppressed: 'duplicate' });
  });

  it('makes a duplicate that arrives while the first runs wait: suppressed when the first delivers', async () => {
    const arrived = hook.received.length;
    hook.hold();
    const first = dispatcher.dispatch(alert({ source_id: 'cam-c1', event_id: 'c1', dedup: DEDUP }));
    await hook.waitFor(arrived + 1);
    const second = dispatcher.dispatch(alert({ source_id: 'cam-c1', event_id: 'c2', dedup: DEDUP }));
    hook.release();
    expect(await first).toMatchObject({ event_id: 'c1', actions_taken: ['trigger_webhook'] });
    expect(await second).toMatchObject({ event_id: 'c2', actions_taken: [], suppressed: 'duplicate' });
    expect(hook.received.length).toBe(arrived + 1);
  });

  it('makes a duplicate that arrives while the first runs wait: run in its place when the first fails', async () => {
    const arrived = hook.received.length;
    hook.hold();
    hook.script.push({ status: 400 }); // not retried: the first dispatch fails once released
    const first = dispatcher.dispatch(alert({ source_id: 'cam-c2', event_id: 'd1', dedup: DEDUP }));
    await hook.waitFor(arrived + 1);
    const second = dispatcher.dispatch(alert({ source_id: 'cam-c2', event_id: 'd2', dedup: DEDUP }));
    hook.release();
    expect(await first).toMatchObject({ event_id: 'd1', actions_taken: [] });
    expect(await second).toMatchObject({ event_id: 'd2', actions_taken: ['trigger_webhook'], suppressed: null });
    expect(hook.received.map((r) => r.body.event_id).slice(arrived)).toEqual(['d1', 'd2']);
  });
});
