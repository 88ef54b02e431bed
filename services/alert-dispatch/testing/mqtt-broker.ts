import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes } from 'aedes';

/** An in-process Aedes MQTT broker on 127.0.0.1 for tests. */
export interface TestBroker {
  url: string;
  close(): Promise<void>;
}

/** Starts an Aedes broker on an ephemeral port. */
export async function startTestBroker(): Promise<TestBroker> {
  const broker = await Aedes.createBroker();
  const server = net.createServer(broker.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
