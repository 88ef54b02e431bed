import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes } from 'aedes';

/** A real MQTT broker (aedes, in-process) on 127.0.0.1 that can be stopped and started again on the same port. */
export interface RestartableBroker {
  url: string;
  /** Stops the broker and drops every client (a broker outage). */
  stop(): Promise<void>;
  /** Starts a fresh broker on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Starts an aedes broker on an ephemeral loopback port. */
export async function startRestartableBroker(): Promise<RestartableBroker> {
  let port = 0;
  let running: { broker: Aedes; server: net.Server } | undefined;
  const start = async () => {
    const broker = await Aedes.createBroker();
    const server = net.createServer(broker.handle);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server.address() as AddressInfo).port;
    running = { broker, server };
  };
  const stop = async () => {
    const current = running;
    running = undefined;
    if (!current) return;
    await new Promise<void>((resolve) => current.broker.close(() => resolve()));
    await new Promise<void>((resolve) => current.server.close(() => resolve()));
  };
  await start();
  return { url: `mqtt://127.0.0.1:${port}`, stop, start, close: stop };
}
