import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger } from '../lib/log/index.js';
import { REDIS_SERVER, startRedisServer, type RedisServer } from '../lib/shared-state/testing/redis-server.js';
import { loadAlertDispatchConfig } from './config.js';
import { startAlertDispatch, type RunningAlertDispatch } from './main.js';
import { startRoundRobinProxy, type RoundRobinProxy } from './testing/round-robin-proxy.js';
import { openSse } from './testing/sse-client.js';
import { startWebhookReceiver, type WebhookReceiver } from './testing/webhook-receiver.js';

const withRedis = REDIS_SERVER ? describe : describe.skip;
if (!REDIS_SERVER) console.warn('SKIPPED: redis-server is not installed (apt-get install redis-server); replica tests');

/** Log lines of one replica, as JSON objects (warn and above go to stderr, the rest to stdout). */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new PassThrough();
  sink.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n').filter(Boolean)) lines.push(JSON.parse(line));
  });
  const logger = createLogger({
    service: 'alert-dispatch',
    level: 'info',
    json: true,
    streams: { stdout: sink, stderr: sink },
  });
  return { logger, lines };
}

/** POSTs an action request and answers the response body (execute waits for the dispatch). */
async function execute(base: string, body: Record<string, unknown>): Promise<any> {
  const response = await fetch(`${base}/api/v1/actions/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return response.json();
}

const dedup = { enabled: true, fields: ['source_id', 'alert_name'], window_seconds: 300 };

withRedis('alert-dispatch with two replicas on one Redis, behind a round-robin proxy', () => {
  let redis: RedisServer;
  let hook: WebhookReceiver;
  let dir: string;
  const replicas: RunningAlertDispatch[] = [];
  const logs: Array<ReturnType<typeof capturedLogger>['lines']> = [];
  let proxy: RoundRobinProxy;

  async function startReplica(): Promise<RunningAlertDispatch> {
    const env = {
      ALERT_DISPATCH_PORT: '0',
      ARGUS_DATA_DIR: dir,
      ARGUS_REDIS_URL: redis.url,
      WEBHOOK_URL: hook.url,
      ALERT_TOOL_RETRY_BASE_MS: '0',
      ALERT_DRAIN_GRACE_MS: '1000',
    };
    const { logger, lines } = capturedLogger();
    logs.push(lines);
    return startAlertDispatch(loadAlertDispatchConfig(env), env, logger);
  }

  beforeAll(async () => {
    redis = await startRedisServer();
    hook = await startWebhookReceiver();
    dir = await mkdtemp(path.join(os.tmpdir(), 'alert-replicas-'));
    replicas.push(await startReplica(), await startReplica());
    proxy = await startRoundRobinProxy(replicas.map((r) => r.url));
  });
  afterAll(async () => {
    await proxy?.close();
    await Promise.all(replicas.map((r) => r.close()));
    await hook?.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses to start when ARGUS_REDIS_URL cannot be reached, naming the reason', async () => {
    const env = { ALERT_DISPATCH_PORT: '0', ARGUS_DATA_DIR: dir, ARGUS_REDIS_URL: `redis://127.0.0.1:1` };
    const { logger } = capturedLogger();
    await expect(startAlertDispatch(loadAlertDispatchConfig(env), env, logger)).rejects.toThrow(
      /redis is unreachable: .*ECONNREFUSED/,
    );
  });

  it('dispatches the same alert sent twice through the proxy once', async () => {
    const before = hook.received.length;
    const alert = { source_id: 'cam-dup', alert_name: 'intrusion', tools: ['trigger_webhook'], dedup };
    const first = await execute(proxy.url, { ...alert, event_id: 'dup-1' });
    const second = await execute(proxy.url, { ...alert, event_id: 'dup-2' });
    expect(proxy.served.slice(-2).sort()).toEqual([0, 1]); // one copy reached each replica
    expect(first).toMatchObject({ actions_taken: ['trigger_webhook'], suppressed: null });
    expect(second).toMatchObject({ actions_taken: [], suppressed: 'duplicate' });
    expect(hook.received.length - before).toBe(1);
  });

  it('makes a copy on the second replica wait for the first one running: suppressed if it delivers, run if it fails', async () => {
    const alert = { source_id: 'cam-race', alert_name: 'intrusion', tools: ['trigger_webhook'], dedup };
    // Delivered: the first holds the webhook, the copy on the other replica waits, then is suppressed.
    let before = hook.received.length;
    hook.hold();
    const first = execute(replicas[0].url, { ...alert, event_id: 'race-1' });
    await hook.waitFor(before + 1);
    const copy = execute(replicas[1].url, { ...alert, event_id: 'race-2' });
    hook.release();
    expect(await first).toMatchObject({ actions_taken: ['trigger_webhook'] });
    expect(await copy).toMatchObject({ suppressed: 'duplicate' });
    expect(hook.received.length - before).toBe(1);

    // Failed (a 400 is not retried): the waiting copy runs in its place and delivers.
    const failing = { ...alert, source_id: 'cam-race-fail' };
    before = hook.received.length;
    hook.script.push({ status: 400 });
    hook.hold();
    const failed = execute(replicas[0].url, { ...failing, event_id: 'fail-1' });
    await hook.waitFor(before + 1);
    const retried = execute(replicas[1].url, { ...failing, event_id: 'fail-2' });
    hook.release();
    expect(await failed).toMatchObject({ actions_taken: [], failed_tools: [{ name: 'trigger_webhook' }] });
    expect(await retried).toMatchObject({ actions_taken: ['trigger_webhook'], suppressed: null });
    expect(hook.received.length - before).toBe(2);
  });

  it('counts escalation across replicas: the third alert escalates wherever it lands, an alert answered NO restarts the count', async () => {
    const alert = {
      source_id: 'cam-esc',
      alert_name: 'loitering',
      tools: ['log_alert'],
      escalation: { threshold_consecutive: 3, additional_tools: ['trigger_webhook'], count_window_seconds: 600 },
    };
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await execute(proxy.url, alert));
    expect(answers.map((a) => a.tools_requested)).toEqual([
      ['log_alert'],
      ['log_alert'],
      ['log_alert', 'trigger_webhook'],
    ]);
    await execute(proxy.url, { ...alert, answer: 'NO' });
    expect((await execute(proxy.url, alert)).tools_requested).toEqual(['log_alert']);
  });

  it('delivers an alert dispatched by replica B to a subscriber of replica A, once, with one shared id', async () => {
    const onA = await openSse(`${replicas[0].url}/api/v1/events`);
    const onB = await openSse(`${replicas[1].url}/api/v1/events`);
    try {
      await execute(replicas[1].url, { source_id: 'cam-fan', alert_name: 'smoke', event_id: 'fan-1' });
      await execute(replicas[0].url, { source_id: 'cam-fan', alert_name: 'smoke', event_id: 'fan-2' });
      const isOurs = (e: { event: string; data: any }) => e.event === 'alert_action' && e.data.source_id === 'cam-fan';
      const seenOnA = [await onA.next(isOurs), await onA.next(isOurs)];
      const seenOnB = [await onB.next(isOurs), await onB.next(isOurs)];
      expect(seenOnA.map((e) => e.data.event_id)).toEqual(['fan-1', 'fan-2']);
      expect(seenOnB.map((e) => e.id)).toEqual(seenOnA.map((e) => e.id));
      expect(seenOnA[0].id).toMatch(/^\d+-\d+$/);
    } finally {
      onA.close();
      onB.close();
    }
  });

  it('lets a client resume on the other replica with Last-Event-ID when its replica stops: nothing lost, nothing doubled', async () => {
    const isOurs = (e: { event: string; data: any }) => e.event === 'alert_action' && e.data.source_id === 'cam-resume';
    const send = (replica: RunningAlertDispatch, n: number) =>
      execute(replica.url, { source_id: 'cam-resume', alert_name: 'smoke', event_id: `resume-${n}` });
    // A third replica, so that the pair behind the proxy stays up for the next tests.
    const doomed = await startReplica();
    const first = await openSse(`${doomed.url}/api/v1/events`);
    await send(replicas[1], 1);
    await send(replicas[1], 2);
    const received = [await first.next(isOurs), await first.next(isOurs)];
    const closing = doomed.close();
    await expect(first.next(() => false)).rejects.toThrow(); // its stream ends
    await closing;
    await send(replicas[1], 3);
    await send(replicas[0], 4);
    const resumed = await openSse(`${replicas[1].url}/api/v1/events`, received.at(-1)!.id);
    try {
      received.push(await resumed.next(isOurs), await resumed.next(isOurs));
      await send(replicas[0], 5);
      received.push(await resumed.next(isOurs));
      expect(received.map((e) => e.data.event_id)).toEqual([1, 2, 3, 4, 5].map((n) => `resume-${n}`));
      expect(new Set(received.map((e) => e.id)).size).toBe(5);
      // Nothing after 5 was sent twice: a marker sent last is the next alert_action the client reads.
      await send(replicas[1], 6);
      expect((await resumed.next((e) => e.event === 'alert_action')).data.event_id).toBe('resume-6');
    } finally {
      first.close();
      resumed.close();
    }
  });

  it('survives a Redis restart: dedup fails open while it is down (logged once), everything is shared again once it is back', async () => {
    const alert = { source_id: 'cam-outage', alert_name: 'intrusion', tools: ['trigger_webhook'], dedup };
    const subscriber = await openSse(`${replicas[0].url}/api/v1/events`);
    try {
      await redis.stop();
      const before = hook.received.length;
      const down = [];
      for (let i = 0; i < 3; i++) down.push(await execute(replicas[0].url, { ...alert, event_id: `down-${i}` }));
      // Fail open: every copy is dispatched, none is lost; the local subscriber still gets them, without an id.
      expect(down.map((a) => a.actions_taken)).toEqual([['trigger_webhook'], ['trigger_webhook'], ['trigger_webhook']]);
      expect(hook.received.length - before).toBe(3);
      const local = await subscriber.next((e) => e.event === 'alert_action' && e.data.event_id === 'down-2');
      expect(local.id).toBeUndefined();
      expect(logs[0].filter((line) => String(line.message).startsWith('shared state unavailable'))).toHaveLength(1);
      expect((await fetch(`${replicas[1].url}/api/v1/health`)).status).toBe(200);

      await redis.restart();
      // The clients reconnect by themselves (bounded back-off): send until an alert comes back numbered.
      let numbered: string | undefined;
      for (let attempt = 0; attempt < 200 && !numbered; attempt++) {
        // Sent to the subscriber's own replica: it gets the probe either way, live (numbered) or local (not).
        await execute(replicas[0].url, { source_id: 'cam-back', alert_name: 'probe', event_id: `probe-${attempt}` });
        const event = await subscriber.next(
          (e) => e.event === 'alert_action' && e.data.event_id === `probe-${attempt}`,
        );
        numbered = event.id;
        if (!numbered) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(numbered).toMatch(/^\d+-\d+$/);
      expect(logs[0].some((line) => line.message === 'shared state reachable again')).toBe(true);
      const again = { ...alert, source_id: 'cam-after-outage' };
      const afterBefore = hook.received.length;
      await execute(proxy.url, { ...again, event_id: 'after-1' });
      expect(await execute(proxy.url, { ...again, event_id: 'after-2' })).toMatchObject({ suppressed: 'duplicate' });
      expect(hook.received.length - afterBefore).toBe(1);
    } finally {
      subscriber.close();
    }
  }, 30_000);
});
