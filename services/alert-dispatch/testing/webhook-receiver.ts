import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted answer of the test webhook: status plus optional headers. */
export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
}

/** A webhook receiver on 127.0.0.1 for tests: records JSON bodies and answers from a script (then 200). */
export interface WebhookReceiver {
  url: string;
  received: Array<{ path: string; body: any; headers: http.IncomingHttpHeaders }>;
  /** Answers given to the next requests, in order; 200 once the script is used up. */
  script: ScriptedAnswer[];
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<void>;
  /** From now on requests are recorded but not answered until `release()` (a slow peer the test controls). */
  hold(): void;
  /** Answers every held request and stops holding. */
  release(): void;
  close(): Promise<void>;
}

/** Starts a webhook receiver on an ephemeral port of `host` (a loopback address; 127.0.0.1 by default). */
export async function startWebhookReceiver(host = '127.0.0.1'): Promise<WebhookReceiver> {
  const received: WebhookReceiver['received'] = [];
  const script: ScriptedAnswer[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let holding = false;
  const held: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({ path: req.url ?? '/', body: text ? JSON.parse(text) : null, headers: req.headers });
      const answer = script.shift() ?? { status: 200 };
      const send = () => {
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end('{}');
      };
      if (holding) held.push(send);
      else send();
      for (const w of [...waiters]) {
        if (received.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/hook`,
    received,
    script,
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const send of held.splice(0)) send();
    },
    waitFor: (count) =>
      received.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
