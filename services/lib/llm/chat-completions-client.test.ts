import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { startFakeChatCompletions, type FakeChatCompletions } from '../../../test/support/fake-chat-completions.js';
import { ChatCompletionsClient } from './chat-completions-client.js';
import type { ChatRequest } from './chat-request.js';
import { LlmError } from './llm-error.js';

const KEY = 'sk-secret-never-shown';
const question: ChatRequest = {
  messages: [
    { role: 'system', content: 'Answer briefly.' },
    { role: 'user', content: [{ type: 'text', text: 'What is at the gate?' }] },
  ],
  maxTokens: 64,
  temperature: 0,
};

/** Every delta of a stream, and the error it ended with (undefined when it ended at [DONE]). */
async function drain(stream: AsyncIterable<string>): Promise<{ deltas: string[]; error?: unknown }> {
  const deltas: string[] = [];
  try {
    for await (const delta of stream) deltas.push(delta);
    return { deltas };
  } catch (error) {
    return { deltas, error };
  }
}

let fake: FakeChatCompletions;
let client: ChatCompletionsClient;
const clientWith = (timeoutMs: number, apiKey: string | null = KEY) =>
  new ChatCompletionsClient({
    baseUrl: `${fake.baseUrl}/`,
    model: 'test-model',
    apiKey: apiKey ?? undefined,
    timeoutMs,
  });

beforeAll(async () => {
  fake = await startFakeChatCompletions({ kind: 'content', content: '' });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
  client = clientWith(5000);
});

describe('complete()', () => {
  it('POSTs the request to {baseUrl}/chat/completions and returns the whole answer', async () => {
    fake.behaviour = { kind: 'content', content: 'A red bus.' };
    expect(client.model).toBe('test-model');
    await expect(client.complete(question)).resolves.toBe('A red bus.');
    expect(fake.requests).toEqual([
      {
        authorization: `Bearer ${KEY}`,
        body: { model: 'test-model', messages: question.messages, stream: false, max_tokens: 64, temperature: 0 },
      },
    ]);
  });

  it('sends no Authorization header without a key, and no optional field the request leaves out', async () => {
    fake.behaviour = { kind: 'content', content: 'ok' };
    await clientWith(5000, null).complete({ messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.requests[0]).toEqual({
      authorization: undefined,
      body: { model: 'test-model', messages: [{ role: 'user', content: 'hi' }], stream: false },
    });
  });

  it('answer(): offers tools with tool_choice auto and returns the function calls the model made', async () => {
    fake.behaviour = { kind: 'tool_calls', calls: [{ name: 'log_alert', arguments: '{"level":"high"}' }] };
    const parameters = { type: 'object', properties: { level: { type: 'string' } } };
    await expect(
      client.answer({ ...question, tools: [{ name: 'log_alert', description: 'Log it', parameters }] }),
    ).resolves.toEqual({ content: null, toolCalls: [{ name: 'log_alert', arguments: '{"level":"high"}' }] });
    expect(fake.requests[0].body).toMatchObject({
      tool_choice: 'auto',
      tools: [{ type: 'function', function: { name: 'log_alert', description: 'Log it', parameters } }],
    });
  });

  it('throws protocol on a runaway answer past its bound instead of buffering it', async () => {
    fake.behaviour = { kind: 'raw', body: { choices: [{ message: { content: 'x'.repeat(17 << 20) } }] } };
    await expect(client.complete(question)).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringContaining('larger than'),
    });
  });

  it('throws protocol on an answer without message content', async () => {
    fake.behaviour = { kind: 'raw', body: { choices: [{ message: { role: 'assistant' } }] } };
    await expect(client.complete(question)).rejects.toMatchObject({ kind: 'protocol' });
  });

  it('throws timeout when no answer comes, and the fake sees the connection close', async () => {
    fake.behaviour = { kind: 'hang' };
    const before = fake.disconnects;
    await expect(clientWith(150).complete(question)).rejects.toMatchObject({ kind: 'timeout' });
    await fake.waitForDisconnects(before + 1);
  });
});

describe('stream()', () => {
  it('yields the deltas in order and ends at [DONE]', async () => {
    fake.behaviour = { kind: 'content', content: 'A red double decker bus is parked at the gate.' };
    const { deltas, error } = await drain(client.stream(question));
    expect(error).toBeUndefined();
    expect(deltas.join('')).toBe('A red double decker bus is parked at the gate.');
    expect(deltas.length).toBeGreaterThan(5);
    expect(fake.requests[0].body).toMatchObject({ model: 'test-model', stream: true, max_tokens: 64 });
  });

  it('parses the wire split at every byte (mid-character), CRLF, comments and data over several lines', async () => {
    const tokens = ['Zwei ', 'Fußgänger', ' 🙂🙂', ' 日本', '\nline two\r\n', '"quoted" \\ end'];
    fake.behaviour = {
      kind: 'stream',
      tokens,
      framing: { byteByByte: true, crlf: true, comments: true, multiLineData: true },
    };
    expect(await drain(client.stream(question))).toEqual({ deltas: tokens });
  });

  it('throws protocol after the deltas already yielded when the server sends an error payload', async () => {
    fake.behaviour = { kind: 'stream', tokens: ['one ', 'two ', 'three'], failAfter: { tokens: 2, how: 'error' } };
    const { deltas, error } = await drain(client.stream(question));
    expect(deltas).toEqual(['one ', 'two ']);
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ kind: 'protocol', message: expect.stringContaining('ran out of memory') });
  });

  it('throws network after the deltas already yielded when the connection breaks before [DONE]', async () => {
    fake.behaviour = { kind: 'stream', tokens: ['one ', 'two ', 'three'], failAfter: { tokens: 2, how: 'destroy' } };
    const { deltas, error } = await drain(client.stream(question));
    expect(deltas).toEqual(['one ', 'two ']);
    expect(error).toMatchObject({ kind: 'network' });
  });

  it('yields what arrived before a broken connection to a consumer that falls behind, then the error', async () => {
    // The gap sends each token in its own TCP segment (the pass never depends on it; it is what exposes a loss).
    fake.behaviour = {
      kind: 'stream',
      tokens: ['one ', 'two ', 'three ', 'four'],
      failAfter: { tokens: 3, how: 'destroy' },
      gapMs: 20,
    };
    const failed = fake.waitForFailures(fake.failures + 1);
    const deltas: string[] = [];
    const error = await (async () => {
      for await (const delta of client.stream(question)) {
        deltas.push(delta);
        // The consumer holds the first delta until the server has sent the rest and broken the socket, and the
        // client's socket events have run (event-loop turns, not time).
        await failed;
        for (let turn = 0; turn < 10; turn++) await nextTurn();
      }
    })().catch((e) => e);
    expect(deltas).toEqual(['one ', 'two ', 'three ']);
    expect(error).toMatchObject({ kind: 'network' });
  });

  it('yields a whole JSON answer as one delta when the server does not stream', async () => {
    fake.behaviour = { kind: 'raw', body: { choices: [{ message: { role: 'assistant', content: 'all at once' } }] } };
    expect(await drain(client.stream(question))).toEqual({ deltas: ['all at once'] });
  });

  it('cancels the upstream request at once when the signal aborts', async () => {
    fake.behaviour = { kind: 'stream', tokens: ['never sent'], holdToken: 0 };
    const before = fake.disconnects;
    const abort = new AbortController();
    const first = client.stream(question, abort.signal)[Symbol.asyncIterator]().next();
    await fake.waitForRequests(1);
    abort.abort(new Error('client left'));
    await expect(first).rejects.toMatchObject({ kind: 'aborted' });
    await fake.waitForDisconnects(before + 1);
  });

  it('cancels the upstream request when the consumer leaves the loop early', async () => {
    fake.behaviour = { kind: 'stream', tokens: ['first ', 'held'], holdToken: 1 };
    const before = fake.disconnects;
    for await (const delta of client.stream(question)) {
      expect(delta).toBe('first ');
      break;
    }
    await fake.waitForDisconnects(before + 1);
  });

  it('makes no request when the signal is already aborted', async () => {
    await expect(drain(client.stream(question, AbortSignal.abort()))).resolves.toMatchObject({
      error: { kind: 'aborted' },
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('throws timeout when the first token does not come in time, and the fake sees the connection close', async () => {
    fake.behaviour = { kind: 'stream', tokens: ['late'], holdToken: 0 };
    const before = fake.disconnects;
    const { deltas, error } = await drain(clientWith(150).stream(question));
    expect(deltas).toEqual([]);
    expect(error).toMatchObject({ kind: 'timeout', message: expect.stringContaining('150 ms') });
    await fake.waitForDisconnects(before + 1);
  });

  it('bounds each gap, not the whole stream: a slow stream longer than the time-out completes', async () => {
    const tokens = Array.from({ length: 10 }, (_, i) => `t${i} `);
    fake.behaviour = { kind: 'stream', tokens, gapMs: 150 };
    expect(await drain(clientWith(1000).stream(question))).toEqual({ deltas: tokens });
  });

  it('does not count the time the consumer holds a delta against the server', async () => {
    fake.behaviour = { kind: 'stream', tokens: ['a', 'b', 'c'] };
    const deltas: string[] = [];
    for await (const delta of clientWith(150).stream(question)) {
      deltas.push(delta);
      await sleep(300); // a consumer slower than the time-out: the server had long sent everything
    }
    expect(deltas).toEqual(['a', 'b', 'c']);
  });
});

describe('failures before the answer', () => {
  it.each(['complete', 'stream'] as const)(
    '%s: a non-2xx is a status error with the server message, never the key',
    async (method) => {
      fake.behaviour = {
        kind: 'status',
        status: 401,
        body: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}.`, code: 'invalid_api_key' } }),
      };
      const error: any =
        method === 'complete'
          ? await client.complete(question).catch((e) => e)
          : (await drain(client.stream(question))).error;
      expect(error).toBeInstanceOf(LlmError);
      expect(error).toMatchObject({ kind: 'status', status: 401 });
      expect(error.message).toContain('HTTP 401: Incorrect API key provided: [redacted].');
      expect(error.message).not.toContain(KEY);
    },
  );

  it('a long non-JSON error body is cut short in the message', async () => {
    fake.behaviour = { kind: 'status', status: 502, body: `<html>${'bad gateway '.repeat(5000)}</html>` };
    const error: any = await client.complete(question).catch((e) => e);
    expect(error).toMatchObject({ kind: 'status', status: 502 });
    expect(error.message.length).toBeLessThan(300);
  });

  it('an unreachable server is a network error', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const nowhere = new ChatCompletionsClient({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm', timeoutMs: 5000 });
    await expect(nowhere.complete(question)).rejects.toMatchObject({ kind: 'network' });
    await expect(drain(nowhere.stream(question))).resolves.toMatchObject({ error: { kind: 'network' } });
  });
});
