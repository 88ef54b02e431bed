import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { watchAbortListeners } from '../../../test/support/abort-listeners.js';
import { startFakeChatCompletions, type FakeChatCompletions } from '../../../test/support/fake-chat-completions.js';
import { ChatCompletionsClient } from './chat-completions-client.js';
import { LlmError } from './llm-error.js';

const CONCURRENT = 200;
const question = { messages: [{ role: 'user' as const, content: 'What is at the gate?' }] };

/** Every delta of a stream, or the error it ended with. */
async function drain(stream: AsyncIterable<string>): Promise<string | unknown> {
  let text = '';
  try {
    for await (const delta of stream) text += delta;
    return text;
  } catch (error) {
    return error;
  }
}

let fake: FakeChatCompletions;
let client: ChatCompletionsClient;
beforeAll(async () => {
  fake = await startFakeChatCompletions({ kind: 'content', content: '' });
  client = new ChatCompletionsClient({ baseUrl: fake.baseUrl, model: 'test-model', timeoutMs: 60_000 });
});
afterAll(() => fake.close());

/**
 * A caller's signal is often process-long (alert-dispatch's shutdown, which every agent call of every dispatch shares):
 * however many calls are in flight on it, it carries one listener for them all and none once they have ended.
 */
describe('LLM calls sharing one long-lived signal', () => {
  it.each([
    ['answered to [DONE]', undefined, 'all at once'],
    ['failed by the server', { tokens: 0, how: 'error' as const }, expect.any(LlmError)],
  ])(`${CONCURRENT} concurrent streams %s add no listener each to the shared signal`, async (_, failAfter, outcome) => {
    fake.requests.length = 0;
    fake.behaviour = { kind: 'stream', tokens: ['all ', 'at ', 'once'], holdToken: 0, failAfter };
    const shared = new AbortController();
    const watch = watchAbortListeners(shared.signal);
    try {
      const calls = Array.from({ length: CONCURRENT }, () => drain(client.stream(question, shared.signal)));
      // Every call is in flight at once: its request arrived and its answer waits on the held token.
      await fake.waitForRequests(CONCURRENT);
      fake.releaseHeldToken();
      const outcomes = await Promise.all(calls);
      expect(outcomes).toEqual(Array.from({ length: CONCURRENT }, () => outcome));
    } finally {
      watch.stop();
    }
    expect({ peak: watch.peak, warned: watch.warned(), now: watch.current() }).toEqual({
      peak: 1,
      warned: false,
      now: 0,
    });
  });
});
