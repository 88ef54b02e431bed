import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';

/**
 * A real MQTT broker (aedes, in-process) on a loopback port for tests, which can be stopped and started again on the
 * same port (a broker outage, a restart).
 */
export interface TestBroker {
  url: string;
  /** Stops the broker and drops every client. */
  stop(): Promise<void>;
  /** Starts a fresh broker on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Starts an aedes broker on an ephemeral loopback port. */
export async function startTestBroker(): Promise<TestBroker> {
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

/** Messages received on a subscription, with a wait for the ones a test expects. */
export interface Subscriber {
  messages: Array<{ topic: string; payload: any }>;
  /** Resolves once a message `match` accepts has arrived (counting from `after`, an index into messages). */
  waitFor(
    match: (message: { topic: string; payload: any }) => boolean,
    after?: number,
  ): Promise<{ topic: string; payload: any }>;
  close(): Promise<void>;
}

/** Subscribes to `filter` (QoS 1) and collects the JSON messages. */
export async function subscribe(url: string, filter: string): Promise<Subscriber> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  const messages: Subscriber['messages'] = [];
  const waiters: Array<{
    match: (m: Subscriber['messages'][number]) => boolean;
    after: number;
    resolve: (m: any) => void;
  }> = [];
  client.on('message', (topic, payload) => {
    const message = { topic, payload: JSON.parse(payload.toString('utf8')) };
    messages.push(message);
    for (const waiter of [...waiters]) {
      if (messages.length - 1 >= waiter.after && waiter.match(message)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
  });
  await client.subscribeAsync(filter, { qos: 1 });
  return {
    messages,
    waitFor: (match, after = 0) => {
      const seen = messages.slice(after).find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, after, resolve }));
    },
    close: async () => {
      await client.endAsync(true);
    },
  };
}
