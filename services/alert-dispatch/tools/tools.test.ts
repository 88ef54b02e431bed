import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { createLogger } from '../../lib/log/index.js';
import { AllowList } from '../../lib/outbound/index.js';
import { runTool, type RetryPolicy } from '../dispatch/run-tool.js';
import type { ActionRequest } from '../dispatch/types.js';
import { actionRequest } from '../testing/action-request.js';
import { startTestBroker, type TestBroker } from '../../../test/support/mqtt-broker.js';
import { startWebhookReceiver, type WebhookReceiver } from '../testing/webhook-receiver.js';
import { captureSnapshotTool } from './capture-snapshot.js';
import { logAlertTool } from './log-alert.js';
import { publishMqttTool, renderTopic } from './publish-mqtt.js';
import { triggerWebhookTool, parseRetryAfter } from './trigger-webhook.js';
import { fixtureImage } from '../../../test/support/fixtures.js';
import { captureLogs, logsWritten } from '../../../test/support/logs.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });
/** The receivers listen on 127.0.0.1: per-request webhook URLs reach only what WEBHOOK_URL_ALLOW lists. */
const LOOPBACK_ONE = AllowList.parse('127.0.0.1/32');
const JPEG = fixtureImage('person_multi_det.jpg');

const request = (over: Partial<ActionRequest> = {}) =>
  actionRequest({
    event_id: 'evt-1',
    source_id: 'cam/1',
    reason: 'person in zone',
    timestamp: '2024-05-01T10:00:00.000+00:00',
    ...over,
  });

/** A policy whose sleeps are recorded instead of waited, so retry tests never depend on the clock. */
const recordingPolicy = (over: Partial<RetryPolicy> = {}) => {
  const sleeps: number[] = [];
  const policy: RetryPolicy = {
    timeoutMs: 2000,
    maxAttempts: 3,
    baseDelayMs: 100,
    maxDelayMs: 5000,
    sleep: async (ms) => void sleeps.push(ms),
    ...over,
  };
  return { policy, sleeps };
};

describe('trigger_webhook', () => {
  let hook: WebhookReceiver;
  beforeAll(async () => {
    hook = await startWebhookReceiver();
  });
  afterAll(() => hook.close());

  it('posts the alert summary (no payload bytes) to the per-request url even without WEBHOOK_URL', async () => {
    const tool = triggerWebhookTool({ allow: LOOPBACK_ONE });
    expect(tool.enabled()).toBe(false);
    expect(tool.runnable({})).toBe(false);
    expect(tool.runnable({ url: hook.url })).toBe(true);
    const { policy } = recordingPolicy();
    const before = hook.received.length;
    const r = await runTool(tool, {
      request: request({ payloads: [{ kind: 'text', encoding: 'raw', data_text: 'secret-bytes' }] }),
      args: { url: hook.url },
      snapshotPath: '/snap/x.jpg',
      logger,
      policy,
    });
    expect(r).toMatchObject({ success: true, attempts: 1 });
    const got = hook.received[before].body;
    expect(got).toMatchObject({
      event: 'alert',
      event_id: 'evt-1',
      source_id: 'cam/1',
      snapshot_path: '/snap/x.jpg',
      payload_kinds: ['text'],
    });
    expect(JSON.stringify(got)).not.toContain('secret-bytes');
  });

  it('retries a 503 after its Retry-After, then succeeds', async () => {
    const tool = triggerWebhookTool({ defaultUrl: hook.url });
    expect(tool.enabled()).toBe(true);
    hook.script.push(
      { status: 503, headers: { 'retry-after': '2' } },
      { status: 429, headers: { 'retry-after': '60' } },
    );
    const before = hook.received.length;
    const { policy, sleeps } = recordingPolicy();
    const r = await runTool(tool, { request: request(), args: {}, snapshotPath: null, logger, policy });
    expect(r).toMatchObject({ success: true, attempts: 3 });
    expect(hook.received.length - before).toBe(3);
    expect(sleeps).toEqual([2000, 5000]); // the second Retry-After (60 s) is capped at maxDelayMs
  });

  it('gives up after the attempt budget and does not retry a 400', async () => {
    const tool = triggerWebhookTool({ defaultUrl: hook.url });
    hook.script.push({ status: 500 }, { status: 500 }, { status: 500 });
    const { policy, sleeps } = recordingPolicy();
    const r = await runTool(tool, { request: request(), args: {}, snapshotPath: null, logger, policy });
    expect(r).toMatchObject({ success: false, attempts: 3, error: 'webhook answered 500' });
    expect(sleeps).toHaveLength(2);
    expect(sleeps[1]).toBeGreaterThan(sleeps[0]); // exponential back-off
    hook.script.push({ status: 400 });
    const r400 = await runTool(tool, {
      request: request(),
      args: {},
      snapshotPath: null,
      logger,
      policy: recordingPolicy().policy,
    });
    expect(r400).toMatchObject({ success: false, attempts: 1 });
  });

  it('refuses non-http urls and reports unreachable hosts as retryable failures', async () => {
    const tool = triggerWebhookTool({ allow: LOOPBACK_ONE });
    const { policy } = recordingPolicy({ maxAttempts: 2 });
    const file = await runTool(tool, {
      request: request(),
      args: { url: 'file:///etc/passwd' },
      snapshotPath: null,
      logger,
      policy,
    });
    expect(file).toMatchObject({ success: false, attempts: 1, error: 'webhook url must use http or https' });
    const closed = await runTool(tool, {
      request: request(),
      args: { url: 'http://127.0.0.1:1/x' },
      snapshotPath: null,
      logger,
      policy,
    });
    expect(closed).toMatchObject({
      success: false,
      attempts: 2,
      error: 'webhook unreachable: connection to 127.0.0.1:1 failed (ECONNREFUSED)',
    });
  });

  describe('address guard (WEBHOOK_URL_ALLOW=127.0.0.1/32)', () => {
    let v4: WebhookReceiver;
    let v6: WebhookReceiver;
    beforeAll(async () => {
      v4 = await startWebhookReceiver('127.0.0.2');
      v6 = await startWebhookReceiver('::1');
    });
    afterAll(async () => {
      await v4.close();
      await v6.close();
    });

    const run = (tool: ReturnType<typeof triggerWebhookTool>, args: Record<string, unknown>) =>
      runTool(tool, { request: request(), args, snapshotPath: null, logger, policy: recordingPolicy().policy });

    it('refuses a per-request url outside the allow-list once, without connecting, and says why', async () => {
      const resolve = async () => [{ address: '127.0.0.2', family: 4 as const }];
      const tool = triggerWebhookTool({ allow: LOOPBACK_ONE, resolve });
      expect(await run(tool, { url: v4.url })).toEqual({
        name: 'trigger_webhook',
        success: false,
        refused: true,
        attempts: 1,
        duration_ms: expect.any(Number),
        error: 'refused: 127.0.0.2 is a loopback address not in WEBHOOK_URL_ALLOW',
      });
      expect((await run(tool, { url: v6.url })).error).toBe(
        'refused: ::1 is a loopback address not in WEBHOOK_URL_ALLOW',
      );
      const named = await run(tool, { url: `http://hooks.test:${new URL(v4.url).port}/hook` });
      expect(named.error).toBe(
        'refused: hooks.test resolves to 127.0.0.2, a loopback address not in WEBHOOK_URL_ALLOW',
      );
      // Nothing allow-listed: even 127.0.0.1 is refused.
      const closedByDefault = await run(triggerWebhookTool({}), { url: hook.url });
      expect(closedByDefault.error).toBe('refused: 127.0.0.1 is a loopback address not in WEBHOOK_URL_ALLOW');
      expect([v4.received.length, v6.received.length]).toEqual([0, 0]);
    });

    it('always reaches WEBHOOK_URL, wherever it points, but nothing else there', async () => {
      const tool = triggerWebhookTool({ defaultUrl: v4.url, allow: LOOPBACK_ONE });
      expect(await run(tool, {})).toMatchObject({ success: true, output: { status: 200 } });
      expect(await run(tool, { url: v4.url })).toMatchObject({ success: true }); // the configured URL itself
      expect(await run(tool, { url: `${v4.url}/other` })).toMatchObject({ refused: true });
      expect(v4.received.map((r) => r.path)).toEqual(['/hook', '/hook']);
    });
  });

  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('log_alert', () => {
  it('writes one structured log line with the alert summary', async () => {
    const { logger: capture, lines } = captureLogs();
    const r = await runTool(logAlertTool(), {
      request: request(),
      args: {},
      snapshotPath: '/s.jpg',
      logger: capture,
      policy: recordingPolicy().policy,
    });
    await logsWritten();
    expect(r.success).toBe(true);
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'info',
        message: 'alert',
        tool: 'log_alert',
        event_id: 'evt-1',
        source_id: 'cam/1',
        snapshot_path: '/s.jpg',
        alert_timestamp: request().timestamp,
      }),
    ]);
    // The line's own `timestamp` is when it was logged, not the alert's time.
    expect(lines()[0].timestamp).not.toBe(request().timestamp);
    expect(Date.parse(lines()[0].timestamp)).not.toBeNaN();
  });
});

describe('runTool time-outs', () => {
  it('abandons an attempt at the time-out, retries it, and reports the failure', async () => {
    let calls = 0;
    const hanging = {
      ...triggerWebhookTool({}),
      name: 'hang',
      runnable: () => true,
      run: () => {
        calls++;
        return new Promise<never>(() => undefined); // ignores its signal on purpose
      },
    };
    const { policy } = recordingPolicy({ timeoutMs: 20, maxAttempts: 2 });
    const r = await runTool(hanging, { request: request(), args: {}, snapshotPath: null, logger, policy });
    expect(r).toMatchObject({ success: false, attempts: 2, error: 'timed out after 20 ms' });
    expect(calls).toBe(2);
  });

  it('aborts the signal of a tool that reads it, at the time-out and on shutdown', async () => {
    const reasons: string[] = [];
    const listening = {
      ...triggerWebhookTool({}),
      name: 'listen',
      runnable: () => true,
      run: ({ signal }: { signal: AbortSignal }) =>
        new Promise<never>((_, reject) =>
          signal.addEventListener('abort', () => {
            reasons.push(String((signal.reason as Error).message));
            reject(signal.reason);
          }),
        ),
    };
    const { policy } = recordingPolicy({ timeoutMs: 20, maxAttempts: 1 });
    const timedOut = await runTool(listening, { request: request(), args: {}, snapshotPath: null, logger, policy });
    expect(timedOut).toMatchObject({ success: false, error: 'timed out after 20 ms' });
    expect(reasons).toEqual(['timed out after 20 ms']);

    // A tool that reads its signal only after the shutdown fired gets it already aborted.
    const shutdown = new AbortController();
    const lateReader = {
      ...listening,
      run: (ctx: { signal: AbortSignal }) => {
        shutdown.abort(new Error('service shutting down'));
        return Promise.resolve({ aborted: ctx.signal.aborted });
      },
    };
    const input = {
      request: request(),
      args: {},
      snapshotPath: null,
      logger,
      policy: { ...policy, timeoutMs: 2000 },
      signal: shutdown.signal,
    };
    expect(await runTool(lateReader, input)).toMatchObject({ success: true, output: { aborted: true } });
    // Once the shutdown fired, no tool starts at all.
    let started = false;
    const notStarted = { ...listening, run: () => ((started = true), Promise.resolve({})) };
    expect(await runTool(notStarted, input)).toMatchObject({
      success: false,
      attempts: 0,
      error: 'service shutting down',
    });
    expect(started).toBe(false);
  });
});

describe('capture_snapshot', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'snap-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const { policy } = recordingPolicy({ maxAttempts: 1 });

  it('writes the first image payload under a generated name and returns its path', async () => {
    const jpeg = await readFile(JPEG);
    const tool = captureSnapshotTool({
      directory: path.join(dir, 'nested'),
      now: () => Date.parse('2024-05-01T10:00:00Z'),
    });
    const r = await runTool(tool, {
      request: request({
        payloads: [
          { kind: 'text', encoding: 'raw', data_text: 'hello' },
          { kind: 'image', encoding: 'base64', mime_type: 'image/png', data_base64: jpeg.toString('base64') },
        ],
      }),
      args: {},
      snapshotPath: null,
      logger,
      policy,
    });
    expect(r.success).toBe(true);
    const file = r.output!.snapshot_path as string;
    expect(path.dirname(file)).toBe(path.join(dir, 'nested'));
    expect(path.basename(file)).toMatch(/^2024-05-01T10-00-00-000Z-[0-9a-f-]{36}\.jpg$/); // extension from the bytes, not mime_type
    expect((await readFile(file)).equals(jpeg)).toBe(true);
  });

  it('accepts a base64 data: URI', async () => {
    const png = await readFile(fixtureImage('chelsea.png'));
    const tool = captureSnapshotTool({ directory: dir });
    const r = await runTool(tool, {
      request: request({
        payloads: [{ kind: 'image', encoding: 'uri', uri: `data:image/png;base64,${png.toString('base64')}` }],
      }),
      args: {},
      snapshotPath: null,
      logger,
      policy,
    });
    expect(r.success).toBe(true);
    expect(r.output!.snapshot_path).toMatch(/\.png$/);
  });

  it('refuses a payload that is not an image, a remote URI, and an alert without an image', async () => {
    const tool = captureSnapshotTool({ directory: dir });
    const before = await readdir(dir);
    const notImage = await runTool(tool, {
      request: request({
        payloads: [
          { kind: 'image', encoding: 'base64', data_base64: Buffer.from('#!/bin/sh\nrm -rf /\n').toString('base64') },
        ],
      }),
      args: {},
      snapshotPath: null,
      logger,
      policy,
    });
    expect(notImage).toMatchObject({ success: false, error: 'image payload is not a recognised image' });
    const remote = await runTool(tool, {
      request: request({ payloads: [{ kind: 'image', encoding: 'uri', uri: 'http://example.com/x.jpg' }] }),
      args: {},
      snapshotPath: null,
      logger,
      policy,
    });
    expect(remote.success).toBe(false);
    const none = await runTool(tool, { request: request(), args: {}, snapshotPath: null, logger, policy });
    expect(none).toMatchObject({ success: false, error: 'alert carries no image payload' });
    expect(await readdir(dir)).toEqual(before);
  });
});

describe('publish_mqtt against a real broker', () => {
  let broker: TestBroker;
  beforeAll(async () => {
    broker = await startTestBroker();
  });
  afterAll(() => broker.close());

  it('publishes with QoS 1 on the templated topic and on a per-request topic, over one reused client', async () => {
    const subscriber = await mqtt.connectAsync(broker.url);
    const messages: Array<{ topic: string; body: any; qos: number }> = [];
    subscriber.on('message', (topic, payload, packet) =>
      messages.push({ topic, body: JSON.parse(payload.toString()), qos: packet.qos }),
    );
    await subscriber.subscribeAsync('argus/#', { qos: 1 });
    const tool = publishMqttTool({ brokerUrl: broker.url, topicTemplate: 'argus/alerts/{source_id}', logger });
    expect(tool.enabled()).toBe(true);
    try {
      const { policy } = recordingPolicy();
      const first = await runTool(tool, { request: request(), args: {}, snapshotPath: '/s.jpg', logger, policy });
      expect(first).toMatchObject({ success: true, output: { topic: 'argus/alerts/cam_1', qos: 1 } });
      const second = await runTool(tool, {
        request: request({ event_id: 'evt-2' }),
        args: { topic: 'argus/custom' },
        snapshotPath: null,
        logger,
        policy,
      });
      expect(second.success).toBe(true);
      const bad = await runTool(tool, {
        request: request(),
        args: { topic: 'argus/#' },
        snapshotPath: null,
        logger,
        policy,
      });
      expect(bad.success).toBe(false);
      for (let i = 0; i < 100 && messages.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(messages).toEqual([
        {
          topic: 'argus/alerts/cam_1',
          qos: 1,
          body: expect.objectContaining({ event_id: 'evt-1', source_id: 'cam/1', snapshot_path: '/s.jpg' }),
        },
        { topic: 'argus/custom', qos: 1, body: expect.objectContaining({ event_id: 'evt-2' }) },
      ]);
    } finally {
      await tool.close();
      await subscriber.endAsync();
    }
  });

  it('is disabled without MQTT_BROKER and renders safe topics', () => {
    expect(publishMqttTool({ topicTemplate: 'x', logger }).enabled()).toBe(false);
    expect(renderTopic('a/{alert_name}/{source_id}', { alert_name: 'in+out', source_id: '#' })).toBe('a/in_out/_');
  });
});
