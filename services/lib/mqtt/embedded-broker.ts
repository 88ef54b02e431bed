import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes } from 'aedes';

/** An in-process MQTT broker (Aedes): the embedded default when MQTT_BROKER is unset. */
export interface EmbeddedBroker {
  /** `mqtt://host:port` as clients reach it. */
  url: string;
  close(): Promise<void>;
}

/** Starts an Aedes broker listening on `host:port` (port 0: any free port). */
export async function startEmbeddedBroker(host: string, port: number): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker();
  const server = net.createServer(broker.handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `mqtt://${shownHost}:${address.port}`,
    close: async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
