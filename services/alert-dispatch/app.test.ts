import { serveDispatch } from './testing/serve-dispatch.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RunningServer } from '../lib/http/index.js';
import { createLogger } from '../lib/log/index.js';
import { AllowList } from '../lib/outbound/index.js';
import type { RetryPolicy } from './dispatch/run-tool.js';
import { McpManager } from './mcp/mcp-manager.js';
import { SubscriptionStore } from './subscriptions/subscription-store.js';
import { startWebhookReceiver, type WebhookReceiver } from './testing/webhook-receiver.js';
import { captureSnapshotTool } from './tools/capture-snapshot.js';
import { logAlertTool } from './tools/log-alert.js';
import { publishMqttTool } from './tools/publish-mqtt.js';
import { ToolRegistry } from './tools/registry.js';
import { triggerWebhookTool } from './tools/trigger-webhook.js';
import { fixtureImage } from '../../test/support/fixtures.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });

const SUBSCRIPTIONS = (hookUrl: string) => `
subscriptions:
  - alert_name: intrusion
    tools: [log_alert, trigger_webhook]
    tool_arguments:
      trigger_webhook: { url: "${hookUrl}" }
    escalation: { threshold_consecutive: 3, additional_tools: [capture_snapshot] }
  - alert_name: loitering
    tools: [log_alert]
    dedup: { enabled: true, fields: [source_id, metadata.zone], window_seconds: 60 }
`;

describe('alert dispatch HTTP API', () => {
  let dir: string;
  let hook: WebhookReceiver;
  let server: RunningServer;
  let now: number;
  let events: Array<{ event: string; data: any }>;
  let subsFile: string;
  let jpegBase64: string;
  let mcp: McpManager;
  const policy: RetryPolicy = { timeoutMs: 2000, maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'alert-app-'));
    hook = await startWebhookReceiver();
    subsFile = path.join(dir, 'subscriptions.yaml');
    await writeFile(subsFile, SUBSCRIPTIONS(hook.url));
    jpegBase64 = (await readFile(fixtureImage('person_multi_det.jpg'))).toString('base64');
    now = Date.parse('2024-05-01T10:00:00Z');
    events = [];
    const clock = () => now;
    const subscriptions = new SubscriptionStore(subsFile, logger);
    await subscriptions.reload();
    mcp = new McpManager({ logger });
    await mcp.start();
    const registry = new ToolRegistry(
      [
        logAlertTool(),
        // The receivers listen on loopback: only 127.0.0.1 is opened to URLs from requests and subscriptions.
        triggerWebhookTool({ allow: AllowList.parse('127.0.0.1/32') }),
        captureSnapshotTool({ directory: path.join(dir, 'snapshots') }),
        publishMqttTool({ topicTemplate: 'argus/alerts/{source_id}', logger }),
      ],
      mcp,
    );
    ({ server } = await serveDispatch({
      logger,
      registry,
      subscriptions,
      policy,
      mcp,
      clock,
      events: { publish: (event, data) => void events.push({ event, data }) },
      bodyLimit: '2mb',
      name: 'alert-dispatch-test',
    }));
  });
  afterAll(async () => {
    await server.close();
    await mcp.close();
    await hook.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    events.length = 0;
  });

  const post = (p: string, body: unknown) =>
    fetch(server.url + p, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const execute = async (body: Record<string, unknown>) => {
    const res = await post('/api/v1/actions/execute', body);
    return { status: res.status, body: (await res.json()) as any };
  };

  it('dispatches with the fallback tool and answers the action response', async () => {
    const { status, body } = await execute({
      source_id: 'cam-9',
      alert_name: 'unsubscribed',
      event_id: 'evt-a',
      reason: 'r',
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      event_id: 'evt-a',
      source_id: 'cam-9',
      alert_name: 'unsubscribed',
      actions_taken: ['log_alert'],
      snapshot_path: null,
      timestamp: '2024-05-01T10:00:00.000+00:00',
      suppressed: null,
    });
    expect(typeof body.duration_ms).toBe('number');
    expect(events).toEqual([
      {
        event: 'alert_action',
        data: {
          event_id: 'evt-a',
          source_id: 'cam-9',
          alert_name: 'unsubscribed',
          answer: 'YES',
          reason: 'r',
          actions_taken: ['log_alert'],
          tools_requested: ['log_alert'],
          tool_outcomes: [{ name: 'log_alert', outcome: 'succeeded' }],
          consecutive_count: 1,
          escalated: false,
          snapshot_path: null,
          payload_kinds: [],
          duration_ms: body.duration_ms,
          timestamp: body.timestamp,
        },
      },
    ]);
  });

  it('runs nothing for answer NO (still announced), and generates an event id', async () => {
    const before = hook.received.length;
    const { status, body } = await execute({ source_id: 'cam-1', alert_name: 'intrusion', answer: 'no' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ actions_taken: [], suppressed: 'answer_no' });
    expect(body.event_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(hook.received.length).toBe(before);
    expect(events.map((e) => e.data.answer)).toEqual(['NO']);
  });

  it('uses the subscription defaults and arguments, and escalates at the threshold with the snapshot first', async () => {
    const before = hook.received.length;
    const plain = await execute({ source_id: 'cam-1', alert_name: 'intrusion', consecutive_count: 2 });
    expect(plain.body.actions_taken).toEqual(['log_alert', 'trigger_webhook']);
    expect(hook.received.length).toBe(before + 1);

    const image = { kind: 'image', encoding: 'base64', mime_type: 'image/jpeg', data_base64: jpegBase64 };
    const escalated = await execute({
      source_id: 'cam-1',
      alert_name: 'intrusion',
      consecutive_count: 3,
      payloads: [image],
    });
    expect(escalated.body.actions_taken).toEqual(['capture_snapshot', 'log_alert', 'trigger_webhook']);
    expect(escalated.body.snapshot_path).toMatch(/snapshots\/.+\.jpg$/);
    expect((await readFile(escalated.body.snapshot_path)).toString('base64')).toBe(jpegBase64);
    expect(hook.received.at(-1)!.body).toMatchObject({
      snapshot_path: escalated.body.snapshot_path,
      escalated: true,
      consecutive_count: 3,
    });
    expect(events.at(-1)!.data).toMatchObject({
      escalated: true,
      tools_requested: ['log_alert', 'trigger_webhook', 'capture_snapshot'],
    });

    // The request's own tools and escalation override the subscription's.
    const own = await execute({
      source_id: 'cam-1',
      alert_name: 'intrusion',
      consecutive_count: 3,
      tools: ['log_alert'],
      escalation: { threshold_consecutive: 10, additional_tools: ['trigger_webhook'] },
    });
    expect(own.body.actions_taken).toEqual(['log_alert']);
  });

  it('skips unknown and disabled tools, and a failing webhook fails neither the request nor the other tools', async () => {
    hook.script.push({ status: 500 }, { status: 500 });
    const { status, body } = await execute({
      source_id: 'cam-2',
      alert_name: 'x',
      tools: ['log_alert', 'no_such_tool', 'publish_mqtt', 'trigger_webhook'],
      tool_arguments: { trigger_webhook: { url: hook.url } },
    });
    expect(status).toBe(200);
    expect(body.actions_taken).toEqual(['log_alert']);
    expect(body.failed_tools).toEqual([{ name: 'trigger_webhook', error: 'webhook answered 500' }]);
  });

  it('accounts for every requested tool in the stream event: succeeded, failed, unavailable', async () => {
    hook.script.push({ status: 500 }, { status: 500 });
    const { body } = await execute({
      source_id: 'cam-2',
      alert_name: 'x',
      tools: ['log_alert', 'no_such_tool', 'publish_mqtt', 'trigger_webhook'],
      tool_arguments: { trigger_webhook: { url: hook.url } },
    });
    const outcomes = [
      { name: 'log_alert', outcome: 'succeeded' },
      { name: 'no_such_tool', outcome: 'unavailable', reason: 'unknown tool' },
      { name: 'publish_mqtt', outcome: 'unavailable', reason: 'disabled: set MQTT_BROKER' },
      { name: 'trigger_webhook', outcome: 'failed', reason: 'webhook answered 500' },
    ];
    expect(body.tool_outcomes).toEqual(outcomes);
    expect(events.at(-1)!.data).toMatchObject({
      actions_taken: ['log_alert'],
      tools_requested: ['log_alert', 'no_such_tool', 'publish_mqtt', 'trigger_webhook'],
      tool_outcomes: outcomes,
    });
    await execute({ source_id: 'cam-2', alert_name: 'x', answer: 'NO', tools: ['publish_mqtt'] });
    expect(events.at(-1)!.data.tool_outcomes).toEqual([
      { name: 'publish_mqtt', outcome: 'skipped', reason: 'answer is NO' },
    ]);
  });

  describe('webhook URLs outside WEBHOOK_URL_ALLOW (127.0.0.1/32)', () => {
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

    it('fail the tool in a dispatch as "refused" with the reason, connecting nowhere', async () => {
      const { status, body } = await execute({
        source_id: 'cam-ssrf',
        alert_name: 'x',
        tools: ['log_alert', 'trigger_webhook'],
        tool_arguments: { trigger_webhook: { url: v6.url } },
      });
      expect(status).toBe(200);
      expect(body.actions_taken).toEqual(['log_alert']);
      const error = 'refused: ::1 is a loopback address not in WEBHOOK_URL_ALLOW';
      expect(body.failed_tools).toEqual([{ name: 'trigger_webhook', error }]);
      expect(events.at(-1)!.data.tool_outcomes).toContainEqual({
        name: 'trigger_webhook',
        outcome: 'failed',
        reason: error,
      });
      expect(v6.received).toEqual([]);
    });

    it('answer a manual invocation 403 naming the refusal, connecting nowhere', async () => {
      const res = await post('/api/v1/tools/trigger_webhook/invoke', { arguments: { url: `${v4.url}?x=1` } });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({
        detail: 'Tool trigger_webhook refused: 127.0.0.2 is a loopback address not in WEBHOOK_URL_ALLOW',
      });
      const mapped = await post('/api/v1/tools/trigger_webhook/invoke', {
        arguments: { url: `http://[::ffff:127.0.0.2]:${new URL(v4.url).port}/hook` },
      });
      expect(mapped.status).toBe(403);
      expect(v4.received).toEqual([]);
    });
  });

  it('suppresses duplicates inside the subscription window, per the listed fields', async () => {
    const alert = { source_id: 'cam-3', alert_name: 'loitering', metadata: { zone: 'gate' } };
    expect((await execute(alert)).body.actions_taken).toEqual(['log_alert']);
    now += 59_000;
    const dup = await execute(alert);
    expect(dup.body).toMatchObject({ actions_taken: [], suppressed: 'duplicate' });
    expect((await execute({ ...alert, metadata: { zone: 'yard' } })).body.actions_taken).toEqual(['log_alert']);
    expect((await execute({ source_id: 'cam-3', alert_name: 'loitering' })).body.actions_taken).toEqual(['log_alert']); // zone missing: skip
    expect((await execute({ source_id: 'cam-3', alert_name: 'loitering' })).body.actions_taken).toEqual(['log_alert']);
    // A request's own dedup replaces the subscription's.
    expect((await execute({ ...alert, dedup: { enabled: false } })).body.actions_taken).toEqual(['log_alert']);
    now += 1_000;
    expect((await execute(alert)).body.actions_taken).toEqual(['log_alert']);
    expect(events.filter((e) => e.data.source_id === 'cam-3')).toHaveLength(6); // duplicates are not announced
  });

  it('suppresses a duplicate whatever the order of the dedup fields', async () => {
    const alert = { source_id: 'cam-order', alert_name: 'unsubscribed-order' };
    const dedup = (fields: string[]) => ({ enabled: true, fields, window_seconds: 60 });
    expect((await execute({ ...alert, dedup: dedup(['source_id', 'alert_name']) })).body.suppressed).toBeNull();
    const reordered = await execute({ ...alert, dedup: dedup(['alert_name', 'source_id']) });
    expect(reordered.body).toMatchObject({ actions_taken: [], suppressed: 'duplicate' });
  });

  it('answers 422 naming every invalid field', async () => {
    const res = await post('/api/v1/actions/execute', {
      alert_name: 'a',
      answer: 'MAYBE',
      consecutive_count: 0,
      tools: 'log_alert',
      payloads: [
        { kind: 'image', encoding: 'base64' },
        { kind: 'image', encoding: 'base64', data_base64: 'not base64!' },
        { kind: 'image', encoding: 'uri' },
        { kind: 'text', encoding: 'raw' },
        { kind: 'smell', encoding: 'raw', data_text: 'x' },
      ],
      dedup: { strategy: 'md5', window_seconds: 0, on_missing: 'explode' },
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as any;
    expect(typeof body.detail).toBe('string');
    expect(body.errors.map((e: any) => e.loc.join('.')).sort()).toEqual(
      [
        'body.source_id',
        'body.answer',
        'body.consecutive_count',
        'body.tools',
        'body.payloads.0.data_base64',
        'body.payloads.1.data_base64',
        'body.payloads.2.uri',
        'body.payloads.3.data_text',
        'body.payloads.4.kind',
        'body.dedup.strategy',
        'body.dedup.window_seconds',
        'body.dedup.on_missing',
      ].sort(),
    );
    const malformed = await post('/api/v1/actions/execute', '{"source_id":');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ detail: 'Invalid JSON body' });
  });

  it('refuses unknown fields at the top level and inside dedup, escalation and payloads, and documents so', async () => {
    const res = await post('/api/v1/actions/execute', {
      source_id: 's',
      alert_name: 'a',
      camera: 'north',
      dedup: { enabled: true, window_secs: 5 },
      escalation: { additional_tools: ['log_alert'], threshold: 2 },
      payloads: [{ kind: 'text', data_text: 'hi', colour: 'red', metadata: { free: 'form' } }],
      metadata: { anything: { goes: true } },
      tool_arguments: { log_alert: { whatever: 1 } },
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as any;
    expect(body.errors.map((e: any) => `${e.loc.join('.')} ${e.type}`).sort()).toEqual([
      'body.camera object.unknown',
      'body.dedup.window_secs object.unknown',
      'body.escalation.threshold object.unknown',
      'body.payloads.0.colour object.unknown',
    ]);
    const doc = (await (await fetch(server.url + '/openapi.json')).json()) as any;
    const ref = doc.paths['/api/v1/actions/execute'].post.requestBody.content['application/json'].schema;
    const schema = ref.$ref ? doc.components.schemas[ref.$ref.split('/').pop()] : ref;
    expect([
      schema.additionalProperties,
      schema.properties.dedup.additionalProperties,
      schema.properties.escalation.additionalProperties,
      schema.properties.payloads.items.additionalProperties,
    ]).toEqual([false, false, false, false]);
    expect(schema.properties.metadata.additionalProperties).not.toBe(false);
  });

  it('answers 413 in the {detail} shape for bodies over the limit', async () => {
    const res = await post('/api/v1/actions/execute', {
      source_id: 's',
      alert_name: 'a',
      reason: 'x'.repeat(3_000_000),
    });
    expect(res.status).toBe(413);
    expect(Object.keys((await res.json()) as object)).toEqual(['detail']);
  });

  it('accepts a flexible alert with the documented defaults and dispatches it in the background', async () => {
    const res = await post('/api/v1/alerts', { camera: 'north', confidence: 0.9 });
    expect(res.status).toBe(202);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({
      status: 'accepted',
      alert_type: 'UNKNOWN',
      timestamp: '2024-05-01T10:01:00.000+00:00',
    });
    for (let i = 0; i < 200 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(events[0].data).toMatchObject({
      event_id: body.event_id,
      source_id: 'unknown',
      alert_name: 'UNKNOWN',
      answer: 'YES',
      reason: '',
      actions_taken: ['log_alert'],
    });
  });

  it('maps flexible fields onto the action request (alert_name from alert_type, subscription tools, metadata)', async () => {
    const res = await post('/api/v1/alerts', {
      alert_type: 'loitering',
      source_id: 'cam-flex',
      timestamp: '2024-05-01T12:00:00+02:00',
      zone: 'dock',
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ alert_type: 'loitering', timestamp: '2024-05-01T10:00:00.000+00:00' });
    for (let i = 0; i < 200 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(events[0].data).toMatchObject({
      alert_name: 'loitering',
      source_id: 'cam-flex',
      actions_taken: ['log_alert'],
    });
    // The top-level `zone` landed in metadata.zone, so the subscription's dedup (source_id + metadata.zone) applies.
    await post('/api/v1/alerts', { alert_type: 'loitering', source_id: 'cam-flex', zone: 'dock' });
    await execute({ source_id: 'marker', alert_name: 'marker' });
    expect(events.map((e) => e.data.source_id)).toEqual(['cam-flex', 'marker']);

    const bad = await post('/api/v1/alerts', { answer: 'perhaps', tools: [1], payloads: [{ kind: 'image' }] });
    expect(bad.status).toBe(422);
    const errors = ((await bad.json()) as any).errors.map((e: any) => e.loc.join('.'));
    expect(errors).toEqual(expect.arrayContaining(['body.answer', 'body.tools.0', 'body.payloads.0.data_base64']));
  });

  it('lists tools with enabled flags and required environment', async () => {
    const body = (await (await fetch(server.url + '/api/v1/tools')).json()) as any;
    expect(body.count).toBe(4);
    expect(body.tools).toEqual([
      expect.objectContaining({ name: 'log_alert', enabled: true, requires_env: [] }),
      expect.objectContaining({ name: 'trigger_webhook', enabled: false, requires_env: ['WEBHOOK_URL'] }),
      expect.objectContaining({ name: 'capture_snapshot', enabled: true, requires_env: [] }),
      expect.objectContaining({ name: 'publish_mqtt', enabled: false, requires_env: ['MQTT_BROKER'] }),
    ]);
    expect(body.tools.every((t: any) => typeof t.description === 'string' && t.description.length > 0)).toBe(true);
  });

  it('invokes a built-in tool manually: 200 with the result, 404 unknown, 409 disabled', async () => {
    const ok = await post('/api/v1/tools/trigger_webhook/invoke', {
      arguments: { url: hook.url },
      alert: { source_id: 'manual-cam' },
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({
      tool: 'trigger_webhook',
      success: true,
      result: { status: 200 },
      error: null,
    });
    expect(hook.received.at(-1)!.body).toMatchObject({ source_id: 'manual-cam', alert_name: 'manual' });

    const snap = await post('/api/v1/tools/capture_snapshot/invoke', {
      alert: { payloads: [{ kind: 'image', data_base64: 'aGVsbG8=' }] },
    });
    expect(snap.status).toBe(200);
    expect(await snap.json()).toMatchObject({ success: false, error: 'image payload is not a recognised image' });

    expect((await post('/api/v1/tools/nope/invoke', {})).status).toBe(404);
    const disabled = await post('/api/v1/tools/publish_mqtt/invoke', {});
    expect(disabled.status).toBe(409);
    expect(await disabled.json()).toEqual({ detail: 'Tool publish_mqtt is disabled: set MQTT_BROKER' });
    expect((await post('/api/v1/tools/log_alert/invoke', { alert: { consecutive_count: 0 } })).status).toBe(422);
  });

  it('lists subscriptions, rejects a bad reload keeping the old entries, and applies a good one', async () => {
    const list = (await (await fetch(server.url + '/api/v1/subscriptions')).json()) as any;
    expect(list.count).toBe(2);
    expect(list.subscriptions[0]).toEqual({
      alert_name: 'intrusion',
      tools: ['log_alert', 'trigger_webhook'],
      tool_arguments: { trigger_webhook: { url: hook.url } },
      dedup: {
        enabled: false,
        strategy: 'field_hash',
        fields: ['alert_name', 'source_id'],
        window_seconds: 60,
        on_missing: 'skip',
      },
      escalation: { threshold_consecutive: 3, additional_tools: ['capture_snapshot'] },
    });

    await writeFile(
      subsFile,
      'subscriptions:\n  - alert_name: intrusion\n    escalation: { threshold_consecutive: zero }\n',
    );
    const bad = await post('/api/v1/tools/reload', {});
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as any).detail).toMatch(
      /kept 2 previous entries.*threshold_consecutive must be a number/,
    );
    const after = (await (await fetch(server.url + '/api/v1/subscriptions')).json()) as any;
    expect(after.count).toBe(2);
    expect(after.last_error).toMatch(/threshold_consecutive/);

    await writeFile(subsFile, 'subscriptions:\n  - alert_name: intrusion\n    tools: [capture_snapshot, log_alert]\n');
    const good = await post('/api/v1/tools/reload', {});
    expect(good.status).toBe(200);
    expect(await good.json()).toMatchObject({ status: 'reloaded', subscriptions: 1, tools: 4 });
    const { body } = await execute({ source_id: 'cam-1', alert_name: 'intrusion' });
    expect(body.tools_requested).toEqual(['capture_snapshot', 'log_alert']);
    expect(body.actions_taken).toEqual(['log_alert']); // no image payload: the snapshot tool fails, the rest runs
  });

  it('reports health, the MCP status and documents every route', async () => {
    const health = (await (await fetch(server.url + '/api/v1/health')).json()) as any;
    expect(health).toMatchObject({ status: 'healthy', adk_enabled: false, mcp_enabled: false });
    expect(typeof health.uptime_seconds).toBe('number');
    expect(await (await fetch(server.url + '/api/v1/mcp/status')).json()).toMatchObject({
      enabled: false,
      servers: [],
      total_tools: 0,
    });
    const doc = (await (await fetch(server.url + '/openapi.json')).json()) as any;
    for (const p of [
      '/api/v1/alerts',
      '/api/v1/actions/execute',
      '/api/v1/tools',
      '/api/v1/tools/{name}/invoke',
      '/api/v1/tools/reload',
      '/api/v1/subscriptions',
      '/api/v1/health',
      '/api/v1/mcp/status',
    ]) {
      expect(doc.paths[p]).toBeDefined();
    }
  });
});
