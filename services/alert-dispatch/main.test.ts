import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { createLogger } from '../lib/log/index.js';
import { loadAlertDispatchConfig } from './config.js';
import { drainWithin, startAlertDispatch } from './main.js';
import { startFakeChatCompletions, type FakeChatCompletions } from '../../test/support/fake-chat-completions.js';
import { startTestBroker, type TestBroker } from '../../test/support/mqtt-broker.js';
import { startWebhookReceiver, type WebhookReceiver } from './testing/webhook-receiver.js';
import { fixtureImage } from '../../test/support/fixtures.js';

/** The arguments startAlertDispatch takes for `env`: its validated configuration and the environment itself. */
const configured = (env: NodeJS.ProcessEnv) => [loadAlertDispatchConfig(env), env] as const;

const logger = createLogger({ service: 'test', level: 'error', json: true });

/** Reads SSE frames from a fetch body until `predicate` matches one (bounded by the test time-out). */
async function nextEvent(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  buffer: { text: string },
  predicate: (e: { event: string; data: any }) => boolean,
) {
  const decoder = new TextDecoder();
  for (;;) {
    let cut: number;
    while ((cut = buffer.text.indexOf('\n\n')) >= 0) {
      const frame = buffer.text.slice(0, cut);
      buffer.text = buffer.text.slice(cut + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? 'message';
      const data = frame
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      const parsed = { event, data: data ? JSON.parse(data) : null };
      if (predicate(parsed)) return parsed;
    }
    const { value, done } = await reader.read();
    if (done) throw new Error('stream ended');
    buffer.text += decoder.decode(value, { stream: true });
  }
}

describe('startAlertDispatch (embedded service, every part real)', () => {
  let dir: string;
  let hook: WebhookReceiver;
  let broker: TestBroker;
  let llm: FakeChatCompletions;
  let service: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'alert-main-'));
    hook = await startWebhookReceiver();
    broker = await startTestBroker();
    llm = await startFakeChatCompletions({ kind: 'tool_calls', calls: [] });
    await writeFile(
      path.join(dir, 'subs.yaml'),
      'subscriptions:\n  - alert_name: intrusion\n    tools: [capture_snapshot, trigger_webhook, publish_mqtt, log_alert]\n',
    );
    service = await startAlertDispatch(
      ...configured({
        ALERT_DISPATCH_PORT: '0',
        ARGUS_DATA_DIR: dir,
        ALERT_SUBSCRIPTIONS_FILE: path.join(dir, 'subs.yaml'),
        WEBHOOK_URL: hook.url,
        MQTT_BROKER: broker.url,
        LLM_BASE_URL: llm.baseUrl,
        LLM_API_KEY: 'sk-never-logged',
        LLM_TIMEOUT_MS: '2000',
        PATH: process.env.PATH,
      }),
      logger,
    );
  });
  afterAll(async () => {
    await service?.close();
    await llm.close();
    await broker.close();
    await hook.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reports agent mode in health and lists every tool as enabled', async () => {
    expect(await (await fetch(`${service.url}/api/v1/health`)).json()).toMatchObject({
      status: 'healthy',
      adk_enabled: true,
      mcp_enabled: false,
    });
    const tools = (await (await fetch(`${service.url}/api/v1/tools`)).json()) as any;
    expect(tools.tools.map((t: any) => [t.name, t.enabled])).toEqual([
      ['log_alert', true],
      ['trigger_webhook', true],
      ['capture_snapshot', true],
      ['publish_mqtt', true],
    ]);
  });

  it('dispatches through the agent and fans the result out to an SSE client and the MQTT broker', async () => {
    const subscriber = await mqtt.connectAsync(broker.url);
    const messages: Array<{ topic: string; qos: number; body: any }> = [];
    subscriber.on('message', (topic, payload, packet) =>
      messages.push({ topic, qos: packet.qos, body: JSON.parse(payload.toString()) }),
    );
    await subscriber.subscribeAsync('argus/alerts/#', { qos: 1 });
    const controller = new AbortController();
    try {
      const sse = await fetch(`${service.url}/api/v1/events`, { signal: controller.signal });
      expect(sse.headers.get('content-type')).toMatch(/text\/event-stream/);
      const reader = sse.body!.getReader();
      const buffer = { text: '' };
      await nextEvent(reader, buffer, (e) => e.event === 'init');

      llm.behaviour = {
        kind: 'tool_calls',
        calls: [
          { name: 'publish_mqtt', arguments: '{}' },
          { name: 'trigger_webhook', arguments: '{}' },
        ],
      };
      const png = (await import('node:fs')).readFileSync(fixtureImage('coffee.png')).toString('base64');
      const res = await fetch(`${service.url}/api/v1/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          alert_type: 'intrusion',
          source_id: 'cam-7',
          reason: 'person',
          payloads: [{ kind: 'image', encoding: 'base64', data_base64: png }],
        }),
      });
      expect(res.status).toBe(202);
      const { event_id } = (await res.json()) as any;

      const action = await nextEvent(reader, buffer, (e) => e.event === 'alert_action');
      expect(action.data).toMatchObject({
        event_id,
        source_id: 'cam-7',
        alert_name: 'intrusion',
        answer: 'YES',
        actions_taken: ['capture_snapshot', 'publish_mqtt', 'trigger_webhook'], // the model left out log_alert
        tools_requested: ['capture_snapshot', 'trigger_webhook', 'publish_mqtt', 'log_alert'],
        payload_kinds: ['image'],
      });
      expect(path.dirname(action.data.snapshot_path)).toBe(path.join(dir, 'snapshots'));
      expect(await readdir(path.join(dir, 'snapshots'))).toEqual([path.basename(action.data.snapshot_path)]);
      expect(llm.requests.at(-1)!.authorization).toBe('Bearer sk-never-logged');
      expect(hook.received.at(-1)!.body).toMatchObject({ event_id, snapshot_path: action.data.snapshot_path });
      for (let i = 0; i < 100 && messages.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(messages).toEqual([{ topic: 'argus/alerts/cam-7', qos: 1, body: expect.objectContaining({ event_id }) }]);
    } finally {
      controller.abort();
      await subscriber.endAsync();
    }
  });

  it('refuses to start with an invalid configuration, naming every problem', async () => {
    // The configuration is refused before anything starts (argus up and serve load it first, then start).
    expect(() => configured({ ALERT_DISPATCH_PORT: 'x', WEBHOOK_URL: 'ftp://nope', ALERT_TYPO: '1' })).toThrow(
      /ALERT_TYPO is not a known setting[\s\S]*ALERT_DISPATCH_PORT[\s\S]*WEBHOOK_URL/,
    );
  });

  it('serves every route under the /api/v1 base path and documents it so', async () => {
    const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
    const paths = Object.keys(doc.paths);
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/alerts', '/api/v1/events', '/api/v1/mcp/status']));
    expect(paths.filter((p) => !p.startsWith('/api/v1/'))).toEqual([]);
    expect((await fetch(`${service.url}/api/v1/mcp/status`)).status).toBe(200);
    expect((await fetch(`${service.url}/alerts`, { method: 'POST' })).status).toBe(404);
  });
});

describe('alert dispatch configuration (the platform settings and the contract-named variables)', () => {
  it('reads the shared ARGUS_* settings from the platform schema', () => {
    const config = loadAlertDispatchConfig({
      ARGUS_DATA_DIR: '/srv/argus',
      ARGUS_LOG_LEVEL: 'warn',
      ARGUS_LOG_FORMAT: 'json',
    });
    expect(config.platform).toMatchObject({ dataDir: '/srv/argus', logLevel: 'warn', logJson: true });
    expect(config.snapshotDir).toBe('/srv/argus/snapshots');
    expect(() => loadAlertDispatchConfig({ ARGUS_LOG_LEVEL: 'loud' })).toThrow(/ARGUS_LOG_LEVEL/);
  });

  it('stops on a misspelt WEBHOOK_, MQTT_ or LLM_ variable like on an ALERT_ one', () => {
    expect(() =>
      loadAlertDispatchConfig({ WEBHOOK_ULR: 'http://x', MQTT_BROKR: 'mqtt://x', LLM_BASE_ULR: 'http://x' }),
    ).toThrow(/WEBHOOK_ULR is not a known setting[\s\S]*MQTT_BROKR is not a known setting[\s\S]*LLM_BASE_ULR/);
  });

  it('reads WEBHOOK_URL_ALLOW (empty by default) and names a bad entry', () => {
    expect(loadAlertDispatchConfig({}).webhookUrlAllow.entries).toEqual([]);
    const allow = loadAlertDispatchConfig({ WEBHOOK_URL_ALLOW: '10.0.0.0/8,hooks.internal' }).webhookUrlAllow;
    expect([allow.hasAddress('10.1.1.1'), allow.hasHost('hooks.internal'), allow.hasHost('x.internal')]).toEqual([
      true,
      true,
      false,
    ]);
    expect(() => loadAlertDispatchConfig({ WEBHOOK_URL_ALLOW: 'http://x' })).toThrow(
      /WEBHOOK_URL_ALLOW.*"http:\/\/x" is neither a CIDR, an IP address nor a host name/,
    );
  });

  it('reads the dispatch queue limits and the drain grace', () => {
    expect(loadAlertDispatchConfig({})).toMatchObject({
      queue: { concurrency: 16, maxLength: 128 },
      drainGraceMs: 5000,
    });
    expect(
      loadAlertDispatchConfig({ ALERT_QUEUE_CONCURRENCY: '2', ALERT_QUEUE_LENGTH: '0', ALERT_DRAIN_GRACE_MS: '0' }),
    ).toMatchObject({ queue: { concurrency: 2, maxLength: 0 }, drainGraceMs: 0 });
    expect(() => loadAlertDispatchConfig({ ALERT_QUEUE_CONCURRENCY: '0' })).toThrow(/ALERT_QUEUE_CONCURRENCY/);
  });
});

describe('shutdown while the language model hangs', () => {
  let dir: string;
  let hook: WebhookReceiver;
  let llm: FakeChatCompletions;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'alert-shutdown-'));
    hook = await startWebhookReceiver();
    llm = await startFakeChatCompletions({ kind: 'tool_calls', calls: [] });
  });
  afterAll(async () => {
    await llm.close();
    await hook.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The service with a model that never answers and a five-minute model time-out: only the drain can end the call. */
  function startWithHangingModel(drainGraceMs: string) {
    llm.behaviour = { kind: 'hang' };
    return startAlertDispatch(
      ...configured({
        ALERT_DISPATCH_PORT: '0',
        ARGUS_DATA_DIR: dir,
        WEBHOOK_URL: hook.url,
        LLM_BASE_URL: llm.baseUrl,
        LLM_TIMEOUT_MS: '300000', // the model would hold the dispatch (and close) for five minutes
        ALERT_DRAIN_GRACE_MS: drainGraceMs,
      }),
      logger,
    );
  }

  it('aborts the model call at the end of the drain grace: close() resolves, no tool starts after, no partial file', async () => {
    const service = await startWithHangingModel('100');
    const jpeg = await readFile(fixtureImage('person_multi_det.jpg'));
    const res = await fetch(`${service.url}/api/v1/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        alert_type: 'intrusion',
        tools: ['capture_snapshot', 'trigger_webhook', 'log_alert'],
        payloads: [{ kind: 'image', encoding: 'base64', data_base64: jpeg.toString('base64') }],
      }),
    });
    expect(res.status).toBe(202);
    await llm.waitForRequests(1); // the snapshot is written, the model is asked and never answers

    await service.close();

    expect(hook.received).toEqual([]); // the rules fallback started no tool once aborted
    const snapshots = await readdir(path.join(dir, 'snapshots'));
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]).toMatch(/\.jpg$/);
    expect((await readFile(path.join(dir, 'snapshots', snapshots[0]))).equals(jpeg)).toBe(true);
    await expect(fetch(`${service.url}/api/v1/health`)).rejects.toThrow();
  });
  it("honours the deadline it is given (SIGTERM's one deadline) over a longer drain grace", async () => {
    const service = await startWithHangingModel('600000'); // alone, the drain would wait ten minutes for the model
    const before = llm.requests.length;
    const res = await fetch(`${service.url}/api/v1/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ alert_type: 'intrusion', tools: ['trigger_webhook', 'log_alert'] }),
    });
    expect(res.status).toBe(202);
    await llm.waitForRequests(before + 1);

    // Resolving at all proves the deadline cut the drain: the test's own timeout is far below ten minutes.
    await service.close({ deadline: Date.now() + 200 });

    expect(hook.received).toEqual([]);
    await expect(fetch(`${service.url}/api/v1/health`)).rejects.toThrow();
  });
});

describe('drainWithin', () => {
  it('keeps the configured grace when the deadline leaves room, and three quarters of what is left otherwise', () => {
    expect(drainWithin(5000, 20_000)).toBe(5000);
    expect(drainWithin(600_000, 20_000)).toBe(15_000);
    expect(drainWithin(5000, -10)).toBe(0);
  });
});
