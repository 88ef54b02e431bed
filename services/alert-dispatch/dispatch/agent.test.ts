import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../lib/log/index.js';
import {
  startFakeChatCompletions,
  type FakeChatBehaviour,
  type FakeChatCompletions,
} from '../../../test/support/fake-chat-completions.js';
import { startWebhookReceiver, type WebhookReceiver } from '../testing/webhook-receiver.js';
import { captureSnapshotTool } from '../tools/capture-snapshot.js';
import { logAlertTool } from '../tools/log-alert.js';
import type { McpToolSource } from '../tools/mcp-tool.js';
import { ToolRegistry } from '../tools/registry.js';
import { triggerWebhookTool } from '../tools/trigger-webhook.js';
import { ToolAgent } from './agent.js';
import { DedupStore } from './dedup.js';
import { Dispatcher } from './dispatcher.js';
import type { ActionRequest } from './types.js';
import { fixtureImage } from '../../../test/support/fixtures.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });

/** An MCP source double recording its calls (the real manager is tested by the MCP engineer's suite). */
function recordingMcp() {
  const calls: Array<{ name: string; args: Record<string, unknown> }> = [];
  const source: McpToolSource = {
    tools: () => [
      {
        name: 'notes__create',
        server: 'notes',
        tool: 'create',
        description: 'Create a note',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      },
    ],
    invoke: async (name, args) => {
      calls.push({ name, args });
      return { content: [{ type: 'text', text: 'ok' }], isError: false };
    },
    status: () => ({ enabled: true, servers: [], total_tools: 1 }),
  };
  return { source, calls };
}

describe('agent mode against an OpenAI-compatible server', () => {
  let llm: FakeChatCompletions;
  let hook: WebhookReceiver;
  let dir: string;
  let jpeg: Buffer;
  let mcp: ReturnType<typeof recordingMcp>;
  let dispatcher: Dispatcher;
  let events: Array<{ event: string; data: any }>;

  beforeAll(async () => {
    llm = await startFakeChatCompletions({ kind: 'tool_calls', calls: [] });
    hook = await startWebhookReceiver();
    dir = await mkdtemp(path.join(os.tmpdir(), 'agent-'));
    jpeg = await readFile(fixtureImage('pexels_double_decker_bus.jpg'));
  });
  afterAll(async () => {
    await llm.close();
    await hook.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    mcp = recordingMcp();
    events = [];
    const registry = new ToolRegistry(
      [logAlertTool(), triggerWebhookTool({ defaultUrl: hook.url }), captureSnapshotTool({ directory: dir })],
      mcp.source,
    );
    dispatcher = new Dispatcher({
      registry,
      subscriptions: { find: () => undefined },
      dedup: new DedupStore(() => 0),
      events: { publish: (event, data) => void events.push({ event, data }) },
      logger,
      agent: new ToolAgent({ baseUrl: llm.baseUrl, model: 'test-model', apiKey: 'sk-test', timeoutMs: 300, logger }),
      policy: { timeoutMs: 2000, maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    });
  });

  const request = (): ActionRequest => ({
    event_id: `evt-${Math.random()}`,
    source_id: 'cam-1',
    alert_name: 'intrusion',
    answer: 'YES',
    reason: 'person at the gate',
    consecutive_count: 1,
    escalated: false,
    tools: ['capture_snapshot', 'log_alert', 'trigger_webhook', 'notes__create'],
    tool_arguments: { notes__create: { tag: 'configured' } },
    payloads: [{ kind: 'image', encoding: 'base64', data_base64: jpeg.toString('base64') }],
  });

  it('runs only the tools the model called, after the snapshot, with MCP arguments from the model', async () => {
    llm.behaviour = {
      kind: 'tool_calls',
      calls: [
        { name: 'notes__create', arguments: '{"text":"person at gate","tag":"from-model"}' },
        { name: 'trigger_webhook', arguments: '{"url":"http://evil.example/"}' },
        { name: 'delete_everything', arguments: '{}' },
      ],
    };
    const before = hook.received.length;
    const result = await dispatcher.dispatch(request());
    expect(result.mode).toBe('agent');
    expect(result.actions_taken).toEqual(['capture_snapshot', 'notes__create', 'trigger_webhook']);
    expect(result.snapshot_path).toMatch(/\.jpg$/);
    // The model may fill MCP arguments, but configured ones win; built-in arguments (the webhook URL) stay config.
    expect(mcp.calls).toEqual([{ name: 'notes__create', args: { text: 'person at gate', tag: 'configured' } }]);
    expect(hook.received.length - before).toBe(1);
    expect(hook.received.at(-1)!.body.snapshot_path).toBe(result.snapshot_path);

    const sent = llm.requests.at(-1)!;
    expect(sent.authorization).toBe('Bearer sk-test');
    expect(sent.body.model).toBe('test-model');
    expect(sent.body.tools.map((t: any) => t.function.name)).toEqual(['log_alert', 'trigger_webhook', 'notes__create']);
    expect(JSON.parse(sent.body.messages[1].content).alert.snapshot_path).toBe(result.snapshot_path);
    expect(events[0].data).toMatchObject({
      actions_taken: result.actions_taken,
      answer: 'YES',
      payload_kinds: ['image'],
    });
  });

  it.each<[string, FakeChatBehaviour]>([
    ['an HTTP error', { kind: 'status', status: 500 }],
    ['a time-out', { kind: 'hang' }],
    ['an answer without tool calls', { kind: 'raw', body: { choices: [{ message: { content: 'I would log it' } }] } }],
    ['only unknown tools', { kind: 'tool_calls', calls: [{ name: 'nope', arguments: '{}' }] }],
  ])('falls back to the rules on %s', async (_why, behaviour) => {
    llm.behaviour = behaviour;
    const result = await dispatcher.dispatch(request());
    expect(result.mode).toBe('rules');
    expect(result.actions_taken).toEqual(['capture_snapshot', 'log_alert', 'trigger_webhook', 'notes__create']);
    expect(mcp.calls).toEqual([{ name: 'notes__create', args: { tag: 'configured' } }]);
  });
});
