import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake model answers the next requests. */
export type FakeVlmBehaviour =
  | { kind: 'verdict'; confirmed: boolean; confidence: number; reasoning: string; fenced?: boolean }
  | { kind: 'content'; content: string }
  | { kind: 'status'; status: number }
  | { kind: 'hang' };

/** An OpenAI-compatible chat-completions server on 127.0.0.1 for tests; records every request. */
export interface FakeVlm {
  baseUrl: string;
  requests: Array<{ body: any; authorization?: string }>;
  behaviour: FakeVlmBehaviour;
  /** Resolves once `count` requests have arrived (hanging ones included). */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the fake model server (POST /v1/chat/completions). */
export async function startFakeVlm(): Promise<FakeVlm> {
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const state: FakeVlm = {
    baseUrl: '',
    requests: [],
    behaviour: { kind: 'verdict', confirmed: true, confidence: 0.8, reasoning: 'ok' },
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
      let content: string;
      if (b.kind === 'content') {
        content = b.content;
      } else {
        const json = JSON.stringify({ confirmed: b.confirmed, confidence: b.confidence, reasoning: b.reasoning });
        content = b.fenced ? `\`\`\`json\n${json}\n\`\`\`` : json;
      }
      const body = {
        id: 'chatcmpl-test',
        object: 'chat.completion',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
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
