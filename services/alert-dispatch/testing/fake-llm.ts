import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake model answers the next request. */
export type FakeLlmBehaviour =
  | { kind: 'tool_calls'; calls: Array<{ name: string; arguments: string }> }
  | { kind: 'status'; status: number }
  | { kind: 'raw'; body: unknown }
  | { kind: 'hang' };

/** An OpenAI-compatible chat completions server on 127.0.0.1 for tests; records every request body and header. */
export interface FakeLlm {
  baseUrl: string;
  requests: Array<{ body: any; authorization?: string }>;
  behaviour: FakeLlmBehaviour;
  /** Resolves once `count` requests have arrived (a hanging answer included). */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the fake model server (POST /v1/chat/completions). */
export async function startFakeLlm(): Promise<FakeLlm> {
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const state: FakeLlm = {
    baseUrl: '',
    requests: [],
    behaviour: { kind: 'tool_calls', calls: [] },
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
      if (b.kind === 'hang') return; // never answers; the client's time-out must fire
      if (b.kind === 'status') {
        res.writeHead(b.status, { 'content-type': 'application/json' }).end('{"error":{"message":"boom"}}');
        return;
      }
      const body =
        b.kind === 'raw'
          ? b.body
          : {
              id: 'chatcmpl-test',
              object: 'chat.completion',
              choices: [
                {
                  index: 0,
                  finish_reason: 'tool_calls',
                  message: {
                    role: 'assistant',
                    content: null,
                    tool_calls: b.calls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: c })),
                  },
                },
              ],
            };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
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
