import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startFakeChatCompletions, type FakeChatCompletions } from '../../test/support/fake-chat-completions.js';
import { ChatCompletionsClient } from '../lib/llm/index.js';
import {
  parseEventStream,
  postJson,
  realEmbedders,
  serveQa,
  type QaModels,
  type ServedQa,
} from './testing/serve-app.js';

let models: QaModels;
let fake: FakeChatCompletions;
let qa: ServedQa;
const NOW = Date.UTC(2026, 2, 10, 15, 30);

/** Reads a response body until `seen(text so far)` holds; returns the reader (still open) and the text. */
async function readUntil(response: Response, seen: (text: string) => boolean) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!seen(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before the awaited text; got:\n${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return { reader, text };
}

async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>, text: string): Promise<string> {
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
}

const named = (body: string) =>
  parseEventStream(body).filter((e) => 'event' in e) as Array<{ event: string; data: any }>;

beforeAll(async () => {
  models = await realEmbedders();
  fake = await startFakeChatCompletions({ kind: 'stream', tokens: ['ok'] });
  qa = await serveQa(models, {
    clock: () => NOW,
    model: new ChatCompletionsClient({ baseUrl: fake.baseUrl, model: 'fake-model', timeoutMs: 10_000 }),
    config: { heartbeatMs: 1 },
  });
  const stored = await postJson(`${qa.api}/embeddings`, {
    image_data: 'none',
    metadata: {
      result: 'A courier drops a box at the front door',
      timestamp: Date.UTC(2026, 2, 10, 15, 20),
      camera: 'front-door',
    },
  });
  expect(stored.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await qa.close();
  await fake.close();
  await models.release();
});

beforeEach(() => {
  fake.requests.length = 0;
});

describe('answers from the language model', () => {
  it('names the configured model in /api/model and health', async () => {
    expect(await (await fetch(`${qa.api}/model`)).json()).toEqual({ status: 'Success', llm_model: 'fake-model' });
    expect((await (await fetch(`${qa.api}/health`)).json()).message).toContain('LLM configured (fake-model)');
  });

  it('prompts with the retrieved captions and their times, and streams sources, tokens and done', async () => {
    fake.behaviour = { kind: 'stream', tokens: ['A courier ', 'left a box [1].', '\nline two'] };
    const response = await postJson(`${qa.api}/chat`, { input: 'Was anything delivered in the last hour?' });
    const events = named(await response.text());
    expect(events.map((e) => e.event)).toEqual(['sources', 'token', 'token', 'token', 'done']);
    expect(events[0].data).toEqual([
      expect.objectContaining({
        n: 1,
        text: 'A courier drops a box at the front door',
        time: '2026-03-10T15:20:00.000Z',
      }),
    ]);
    // A newline inside a token survives: every data line is JSON.
    expect(events.slice(1, 4).map((e) => e.data.text)).toEqual(['A courier ', 'left a box [1].', '\nline two']);
    expect(events[4].data).toEqual({ answerer: 'llm', model: 'fake-model' });

    const [request] = fake.requests;
    expect(request.body).toMatchObject({ model: 'fake-model', stream: true, max_tokens: 256, temperature: 0 });
    const [system, user] = request.body.messages;
    expect(system.content).toContain('Cite every caption you use by its number');
    expect(system.content).toContain('Times are in UTC; it is now 2026-03-10T15:30:00.000Z');
    expect(user.content).toContain(
      '[1] 2026-03-10 15:20:00 (camera front-door): A courier drops a box at the front door',
    );
    expect(user.content).toContain('The question asks about in the last hour: 2026-03-10T14:30:00.000Z to');
    expect(user.content).toMatch(/Question: Was anything delivered in the last hour\?$/);
  });

  it('sends comment heartbeats while the first token is held, and none after it', async () => {
    fake.behaviour = { kind: 'stream', tokens: ['late ', 'answer'], holdToken: 0 };
    const response = await postJson(`${qa.api}/chat`, { input: 'anything at the front door?' });
    // Heartbeats after `sources` are the ones sent while the model's first token is awaited.
    const afterSources = (t: string) =>
      t.includes('event: sources') && t.split('event: sources')[1].includes(': heartbeat');
    const { reader, text } = await readUntil(response, afterSources);
    await fake.waitForRequests(1);
    fake.releaseHeldToken();
    const body = await readRest(reader, text);
    const firstToken = body.indexOf('event: token');
    expect(firstToken).toBeGreaterThan(body.lastIndexOf(': heartbeat'));
    expect(named(body).map((e) => e.event)).toEqual(['sources', 'token', 'token', 'done']);
  });

  it.each(['error', 'destroy'] as const)(
    'ends with an error event, cleanly, when the model fails mid-stream (%s)',
    async (how) => {
      fake.behaviour = { kind: 'stream', tokens: ['one ', 'two ', 'three'], failAfter: { tokens: 2, how } };
      const response = await postJson(`${qa.api}/chat`, { input: 'what happened?' });
      expect(response.status).toBe(200);
      const events = named(await response.text());
      expect(events.map((e) => e.event)).toEqual(['sources', 'token', 'token', 'error']);
      expect(events[3].data).toEqual({ message: expect.stringMatching(/^The language model failed: /) });
    },
  );

  it('answers an upstream error status with an error event', async () => {
    fake.behaviour = { kind: 'status', status: 503 };
    const events = named(await (await postJson(`${qa.api}/chat`, { input: 'what happened?' })).text());
    expect(events.map((e) => e.event)).toEqual(['sources', 'error']);
    expect(events[1].data.message).toMatch(/^The language model failed: /);
  });

  it('cancels the upstream request when the client disconnects', async () => {
    fake.behaviour = { kind: 'stream', tokens: ['never ', 'sent'], holdToken: 0 };
    const before = fake.disconnects;
    const client = new AbortController();
    const response = await postJson(`${qa.api}/chat`, { input: 'who is at the door?' }, { signal: client.signal });
    await readUntil(response, (t) => t.includes('event: sources'));
    await fake.waitForRequests(1);
    client.abort();
    await fake.waitForDisconnects(before + 1);
    expect(fake.disconnects).toBe(before + 1);
    fake.releaseHeldToken();
  });
});
