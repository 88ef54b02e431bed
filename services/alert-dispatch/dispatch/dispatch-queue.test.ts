import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { listen, type RunningServer } from '../../lib/http/index.js';
import { createLogger } from '../../lib/log/index.js';
import { createApp } from '../app.js';
import { SubscriptionStore } from '../subscriptions/subscription-store.js';
import { startWebhookReceiver, type WebhookReceiver } from '../testing/webhook-receiver.js';
import { logAlertTool } from '../tools/log-alert.js';
import { ToolRegistry } from '../tools/registry.js';
import { triggerWebhookTool } from '../tools/trigger-webhook.js';
import { DedupStore } from './dedup.js';
import { DispatchQueue } from './dispatch-queue.js';
import { Dispatcher } from './dispatcher.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });

/** The value of an unlabelled metric in Prometheus text format. */
function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return Number(line?.split(' ').at(-1));
}

describe('POST /api/v1/alerts behind the bounded dispatch queue', () => {
  let hook: WebhookReceiver;
  let server: RunningServer;
  let dispatcher: Dispatcher;
  const announced: string[] = [];
  let onAnnounce = () => undefined as void;

  beforeAll(async () => {
    hook = await startWebhookReceiver();
    const registry = new ToolRegistry([logAlertTool(), triggerWebhookTool({ defaultUrl: hook.url })]);
    const subscriptions = new SubscriptionStore(undefined, logger);
    dispatcher = new Dispatcher({
      registry,
      subscriptions,
      dedup: new DedupStore(Date.now),
      events: {
        publish: (_event, data) => {
          announced.push((data as { event_id: string }).event_id);
          onAnnounce();
        },
      },
      logger,
      policy: { timeoutMs: 60_000, maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const intake = new DispatchQueue(dispatcher, { concurrency: 2, maxLength: 3, logger });
    const { app } = createApp({ logger, dispatcher, intake, registry, subscriptions, agentEnabled: false });
    server = await listen(app, { port: 0, host: '127.0.0.1', logger, name: 'queue-test' });
  });
  afterAll(async () => {
    hook.release();
    await server.close();
    await hook.close();
  });

  const postAlert = (id: string) =>
    fetch(`${server.url}/api/v1/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ alert_type: 'intrusion', event_id: id, tools: ['trigger_webhook'] }),
    });
  const metrics = async () => (await fetch(`${server.url}/metrics`)).text();

  it('answers 429 with Retry-After once concurrency + length alerts are held, and runs every queued one after', async () => {
    hook.hold(); // the webhook peer answers nothing until released: dispatches stay running
    const accepted: number[] = [];
    for (const id of ['q1', 'q2', 'q3', 'q4', 'q5']) accepted.push((await postAlert(id)).status);
    expect(accepted).toEqual([202, 202, 202, 202, 202]);
    await hook.waitFor(2); // two run (concurrency 2), three wait (length 3)
    expect(hook.received.map((r) => r.body.event_id).sort()).toEqual(['q1', 'q2']);

    const refused = await postAlert('q6');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({ detail: 'Dispatch queue is full (3 alerts waiting); retry later' });
    let text = await metrics();
    expect(metric(text, 'alert_dispatch_queue_depth')).toBe(3);
    expect(metric(text, 'alert_dispatch_queue_running')).toBe(2);
    expect(metric(text, 'alert_dispatch_queue_rejected_total')).toBe(1);

    const allAnnounced = new Promise<void>((resolve) => {
      onAnnounce = () => void (announced.length === 5 && resolve());
    });
    hook.release();
    await allAnnounced;
    expect(hook.received.map((r) => r.body.event_id).sort()).toEqual(['q1', 'q2', 'q3', 'q4', 'q5']);
    expect([...announced].sort()).toEqual(['q1', 'q2', 'q3', 'q4', 'q5']);
    text = await metrics();
    expect(metric(text, 'alert_dispatch_queue_depth')).toBe(0);
    expect(metric(text, 'alert_dispatch_queue_rejected_total')).toBe(1);
    const q7Done = new Promise<void>((resolve) => {
      onAnnounce = () => void (announced.includes('q7') && resolve());
    });
    expect((await postAlert('q7')).status).toBe(202); // room again
    await q7Done;
  });

  it('drops the alerts still waiting when the drain grace ends, and refuses new ones with 503', async () => {
    hook.hold();
    const arrived = hook.received.length;
    const announcedBefore = announced.length;
    for (const id of ['s1', 's2', 's3', 's4']) expect((await postAlert(id)).status).toBe(202);
    await hook.waitFor(arrived + 2); // s1 and s2 run, s3 and s4 wait
    await dispatcher.drain(0); // no grace: the running webhook calls are aborted at once
    expect(hook.received.length).toBe(arrived + 2);
    expect(announced.slice(announcedBefore).sort()).toEqual(['s1', 's2']); // the aborted ones are still announced
    const text = await metrics();
    expect(metric(text, 'alert_dispatch_queue_dropped_total')).toBe(2);
    expect(metric(text, 'alert_dispatch_queue_depth')).toBe(0);
    const refused = await postAlert('s5');
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ detail: 'Service is shutting down' });
    // A manual tool run is refused by the same shutdown signal: nothing reaches the peer.
    const invoked = await fetch(`${server.url}/api/v1/tools/trigger_webhook/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(await invoked.json()).toMatchObject({ success: false, attempts: 0, error: 'service shutting down' });
    expect(hook.received.length).toBe(arrived + 2);
  });

  it('documents the 429 in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as any;
    expect(Object.keys(doc.paths['/api/v1/alerts'].post.responses)).toContain('429');
  });
});
