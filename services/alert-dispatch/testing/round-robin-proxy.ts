import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A reverse proxy on 127.0.0.1 sending each request to the next of its targets in turn (a load-balanced Service). */
export interface RoundRobinProxy {
  url: string;
  /** Which target served each request so far, by index. */
  served: number[];
  close(): Promise<void>;
}

/** Starts a round-robin HTTP proxy in front of `targets` (base URLs); responses, streams included, are piped through. */
export async function startRoundRobinProxy(targets: string[]): Promise<RoundRobinProxy> {
  const served: number[] = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    const index = next++ % targets.length;
    served.push(index);
    const target = new URL(req.url ?? '/', targets[index]);
    const upstream = http.request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
