import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';

/** An in-process Aedes MQTT broker on 127.0.0.1. */
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
