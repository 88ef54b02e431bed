import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake model answers the next requests. */
export type FakeChatBehaviour =
  | { kind: 'content'; content: string }
  | { kind: 'tool_calls'; calls: Array<{ name: string; arguments: string }> }
  | { kind: 'raw'; body: unknown }
  | { kind: 'status'; status: number }
  | { kind: 'hang' };

/** An OpenAI-compatible chat-completions server on 127.0.0.1 for tests (the LLM/VLM boundary); records every request. */
export interface FakeChatCompletions {
  /** What a client takes as its base URL (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Every request to POST /v1/chat/completions, in order: the parsed body and the Authorization header. */
  requests: Array<{ body: any; authorization?: string }>;
  behaviour: FakeChatBehaviour;
  /** Resolves once `count` requests have arrived (hanging ones included). */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

/** The chat.completion body that answers a request under `behaviour` (its 200 kinds). */
function completionBody(behaviour: Extract<FakeChatBehaviour, { kind: 'content' | 'tool_calls' | 'raw' }>): unknown {
  if (behaviour.kind === 'raw') return behaviour.body;
  const choice =
    behaviour.kind === 'content'
      ? { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: behaviour.content } }
      : {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: behaviour.calls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: c })),
          },
        };
  return { id: 'chatcmpl-test', object: 'chat.completion', choices: [choice] };
}

/** Starts the fake model server (POST /v1/chat/completions), answering as `behaviour` says until it is changed. */
export async function startFakeChatCompletions(behaviour: FakeChatBehaviour): Promise<FakeChatCompletions> {
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const state: FakeChatCompletions = {
    baseUrl: '',
    requests: [],
    behaviour,
    waitForRequests: (count) =>
      state.requests.length >= count
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      state.requests.push({
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        authorization: req.headers.authorization,
      });
      for (const w of waiters.filter((w) => state.requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const b = state.behaviour;
      if (b.kind === 'hang') return; // never answers: the client's time-out must fire
      if (b.kind === 'status') {
        res.writeHead(b.status, { 'content-type': 'application/json' }).end('{"error":{"message":"boom"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completionBody(b)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.baseUrl = `http://127.0.0.1:${port}/v1`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
