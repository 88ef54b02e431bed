import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '../../lib/log/index.js';
import { FakeFrigate } from '../testing/fake-frigate.js';
import { mosquittoMissing, startMosquitto } from '../../../test/support/mosquitto.js';
import { startTestBroker, type TestBroker } from '../../../test/support/mqtt-broker.js';
import { FrigateEventFeed, type FrigateMessage } from './frigate-events.js';

const T0 = 1_767_000_000;
/** The whole suite over one real broker. */
function feedSuite(startBroker: () => Promise<TestBroker>): void {
  let broker: TestBroker;
  let frigate: FakeFrigate;
  let feed: FrigateEventFeed;
  /** Messages the feed delivered, and waiters for the next ones. */
  let received: FrigateMessage[] = [];
  let waiters: Array<() => void> = [];
  let subscriptions = 0;
  let subscriptionWaiters: Array<() => void> = [];

  /** Resolves once `count` messages have been delivered in all (no timing involved). */
  function messages(count: number): Promise<FrigateMessage[]> {
    return new Promise((resolve) => {
      const check = () => (received.length >= count ? resolve(received.slice(0, count)) : waiters.push(check));
      check();
    });
  }

  /** Resolves once the feed has subscribed `count` times in all. */
  function subscribed(count: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => (subscriptions >= count ? resolve() : subscriptionWaiters.push(check));
      check();
    });
  }

  beforeAll(async () => {
    received = [];
    subscriptions = 0;
    broker = await startBroker();
    frigate = new FakeFrigate({ front_door: {} }, { broker: broker.url, topicPrefix: 'nvr' });
    await frigate.start();
    feed = new FrigateEventFeed({
      broker: broker.url,
      topicPrefix: 'nvr',
      logger: createLogger({ service: 'camera-rules-test', level: 'error', json: true }),
      reconnectMs: 50,
    });
    feed.onMessage((message) => {
      received.push(message);
      const ready = waiters;
      waiters = [];
      ready.forEach((w) => w());
    });
    feed.onSubscribed(() => {
      subscriptions++;
      const ready = subscriptionWaiters;
      subscriptionWaiters = [];
      ready.forEach((w) => w());
    });
    feed.start();
    await subscribed(1);
  });

  afterAll(async () => {
    await feed?.close();
    await frigate?.close();
    await broker?.close();
  });

  describe("Frigate's MQTT feed", () => {
    it('delivers <prefix>/events with the after state in the API shape, descriptions and review summaries', async () => {
      frigate.addEvent({
        id: `${T0}.5-abcdef`,
        camera: 'front_door',
        sub_label: 'John Smith',
        zones: ['yard', 'driveway'],
        start_time: T0,
        end_time: T0 + 12,
      });
      await frigate.publishEvent('end', `${T0}.5-abcdef`);
      await frigate.publishDescription(`${T0}.5-abcdef`, 'A man in a red coat walks to the door.');
      await frigate.publishReviewSummary('r1', 'front_door', [`${T0}.5-abcdef`], 'A person delivers a parcel.');
      const [event, description, review] = await messages(3);
      expect(event).toEqual({
        kind: 'event',
        type: 'end',
        event: expect.objectContaining({
          id: `${T0}.5-abcdef`,
          camera: 'front_door',
          label: 'person',
          sub_label: 'John Smith',
          zones: ['yard', 'driveway'],
          start_time: T0,
          end_time: T0 + 12,
          top_score: 0.9,
        }),
      });
      expect(description).toEqual({
        kind: 'description',
        id: `${T0}.5-abcdef`,
        description: 'A man in a red coat walks to the door.',
      });
      expect(review).toEqual({
        kind: 'review-summary',
        id: 'r1',
        camera: 'front_door',
        detections: [`${T0}.5-abcdef`],
        summary: 'A person delivers a parcel.',
      });
    });

    it('drops payloads that are not JSON or not in Frigate’s shape, and keeps going', async () => {
      const before = feed.dropped;
      await frigate.publishRaw('nvr/events', '{not json');
      await frigate.publishRaw('nvr/events', JSON.stringify({ type: 'teleport', after: {} }));
      await frigate.publishRaw('nvr/tracked_object_update', JSON.stringify({ type: 'face', id: 'x' }));
      frigate.addEvent({ id: `${T0 + 1}.5-zzzzzz`, camera: 'front_door', start_time: T0 + 1 });
      await frigate.publishEvent('new', `${T0 + 1}.5-zzzzzz`);
      const all = await messages(4);
      expect(all[3]).toMatchObject({ kind: 'event', type: 'new', event: { id: `${T0 + 1}.5-zzzzzz`, end_time: null } });
      expect(feed.dropped - before).toBe(3);
    });

    it('reports the broker down in health, reconnects and subscribes again when it is back', async () => {
      expect(feed.reachability()).toEqual({ reachable: true, detail: `${broker.url} connected` });
      await broker.stop();
      await new Promise<void>((resolve) => {
        const poll = () => (feed.connected ? setImmediate(poll) : resolve());
        poll();
      });
      expect(feed.reachability()).toMatchObject({ reachable: false, detail: expect.stringContaining('not connected') });
      await broker.start();
      await subscribed(2);
      expect(feed.reachability().reachable).toBe(true);
      // The fake's own client reconnects too; a message published now reaches the feed.
      frigate.addEvent({ id: `${T0 + 2}.5-yyyyyy`, camera: 'front_door', start_time: T0 + 2, end_time: T0 + 3 });
      await frigate.publishEvent('end', `${T0 + 2}.5-yyyyyy`);
      const all = await messages(5);
      expect(all[4]).toMatchObject({ kind: 'event', type: 'end', event: { id: `${T0 + 2}.5-yyyyyy` } });
    });
  });
}

describe('on aedes (in-process)', () => feedSuite(startTestBroker));
const mosquittoSkip = mosquittoMissing();
(mosquittoSkip ? describe.skip : describe)(mosquittoSkip ?? 'on mosquitto (Debian)', () => feedSuite(startMosquitto));
