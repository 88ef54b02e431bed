import net from 'node:net';

/**
 * A loopback port that was free a moment ago (bound on 127.0.0.1 and released), for a server that must be told its
 * port up front — a child process, or one restarted on the same port.
 */
export async function freeLoopbackPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
