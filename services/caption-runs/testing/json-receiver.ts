import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local HTTP server recording the JSON bodies POSTed to it (caption-qa's embeddings, alert-dispatch's alerts). */
export interface JsonReceiver {
  url: string;
  bodies: Array<{ path: string; body: any }>;
  /** The status answered from now on (default 200). */
  status: number;
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the receiver on 127.0.0.1. */
export async function startJsonReceiver(): Promise<JsonReceiver> {
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const receiver: JsonReceiver = {
    url: '',
    bodies: [],
    status: 200,
    waitFor: (count) =>
      receiver.bodies.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      receiver.bodies.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(receiver.status, { 'content-type': 'application/json' }).end('{"status":"success"}');
      for (const waiter of waiters.filter((w) => receiver.bodies.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return receiver;
}
