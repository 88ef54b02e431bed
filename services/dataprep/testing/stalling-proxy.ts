import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request the proxy holds without answering, and how to see its connection close. */
export interface StalledRequest {
  url: string;
  closed: Promise<void>;
}

/** A forwarding HTTP proxy in front of a test server that can hold chosen requests and counts the bytes it relays. */
export interface StallingProxy {
  url: string;
  /** While set, requests whose path contains it are held (never answered) until their client closes. */
  stallPathsContaining: string | undefined;
  /** While set, requests whose path contains it are answered 503, as a failing S3 server would. */
  failPathsContaining: string | undefined;
  /** Resolves with the next request held. */
  nextStall(): Promise<StalledRequest>;
  /** Response body bytes relayed for requests whose path contains `fragment`. */
  bytesServed(fragment: string): number;
  /** First bytes asked for (`Range: bytes=N-…`, 0 without a Range) by the requests whose path contains `fragment`. */
  rangeStarts(fragment: string): number[];
  close(): Promise<void>;
}

/**
 * Starts the proxy on 127.0.0.1:0 forwarding to `target` (same method, path, headers — Host included, so signed URLs
 * made for the proxy's address stay valid).
 */
export async function startStallingProxy(target: string): Promise<StallingProxy> {
  const upstream = new URL(target);
  const served = new Map<string, number>();
  const starts: Array<{ path: string; start: number }> = [];
  const sockets = new Set<Socket>();
  let waiter: ((stalled: StalledRequest) => void) | undefined;
  const held: StalledRequest[] = [];
  const proxy: StallingProxy = {
    url: '',
    stallPathsContaining: undefined,
    failPathsContaining: undefined,
    nextStall: () =>
      new Promise((resolve) => {
        const ready = held.shift();
        if (ready) resolve(ready);
        else waiter = resolve;
      }),
    rangeStarts: (fragment) => starts.filter((s) => s.path.includes(fragment)).map((s) => s.start),
    bytesServed: (fragment) =>
      [...served].filter(([path]) => path.includes(fragment)).reduce((sum, [, bytes]) => sum + bytes, 0),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    starts.push({ path, start: Number(/^bytes=(\d+)-/.exec(req.headers.range ?? '')?.[1] ?? 0) });
    if (proxy.stallPathsContaining && path.includes(proxy.stallPathsContaining)) {
      const stalled = { url: path, closed: new Promise<void>((resolve) => req.socket.once('close', resolve)) };
      if (waiter) {
        waiter(stalled);
        waiter = undefined;
      } else held.push(stalled);
      return;
    }
    if (proxy.failPathsContaining && path.includes(proxy.failPathsContaining)) {
      res.writeHead(503, { 'content-type': 'application/xml' }).end('<Error><Code>SlowDown</Code></Error>');
      return;
    }
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path, headers: req.headers, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('data', (chunk: Buffer) => served.set(path, (served.get(path) ?? 0) + chunk.length));
        answer.pipe(res);
      },
    );
    forward.once('error', () => res.destroy());
    res.once('close', () => forward.destroy());
    req.pipe(forward);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
