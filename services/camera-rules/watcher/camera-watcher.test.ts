import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { API_VERSION, type CameraWatcher } from '../../../operator/api/index.js';
import { EmbeddedResourceStore } from '../../../operator/drivers/embedded/index.js';
import { createLogger } from '../../lib/log/index.js';
import type { Sleep } from '../actions/retry.js';
import { OfflineSummarizer } from '../actions/summarizer.js';
import { EventHandler } from '../events/event-handler.js';
import { EventNotes } from '../events/event-notes.js';
import { FrigateEventFeed } from '../recorder/frigate-events.js';
import { FrigateRecorder } from '../recorder/frigate-recorder.js';
import { RuleBook } from '../rules/rule-book.js';
import { FakeFrigate } from '../testing/fake-frigate.js';
import { mosquittoMissing, startMosquitto } from '../../../test/support/mosquitto.js';
import { startTestBroker, type TestBroker } from '../../../test/support/mqtt-broker.js';
import { watcherObjectName } from '../watchers/watcher-book.js';
import { cameraWatcherWorker, type CameraWatcherWorkerDeps } from './camera-watcher.js';

const NS = 'cameras';
const T0 = 1_767_200_000;
const logger = createLogger({ service: 'camera-rules-test', level: 'error', json: true });
logger.silent = true;

/** The whole suite over one real broker (the feed's messages, its outage and resubscription). */
function watcherSuite(startBroker: () => Promise<TestBroker>): void {
  let dir: string;
  let store: EmbeddedResourceStore;
  let broker: TestBroker;
  let frigate: FakeFrigate;
  let feed: FrigateEventFeed;
  let rules: RuleBook;
  let deps: CameraWatcherWorkerDeps;
  /** Resolvers of the poll sleeps the worker is in, and waiters for its next one (no timing involved). */
  const asleep: Array<() => void> = [];
  let sleepWaiters: Array<() => void> = [];
  const pollSleep: Sleep = (_ms, signal) =>
    new Promise<void>((resolve, reject) => {
      asleep.push(resolve);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      const ready = sleepWaiters;
      sleepWaiters = [];
      ready.forEach((w) => w());
    });
  /** Resolves once the worker has finished a catch-up round and sleeps. */
  const nextSleep = () => new Promise<void>((resolve) => sleepWaiters.push(resolve));
  const watcherName = watcherObjectName('front_door');

  /** Resolves with the watcher once `predicate` holds (watching the store: no polling, no timing). */
  async function watcherWhen(predicate: (w: CameraWatcher) => boolean): Promise<CameraWatcher> {
    let stop: () => Promise<void> = async () => undefined;
    const found = await new Promise<CameraWatcher>((resolve) => {
      void store
        .watch('CameraWatcher', NS, (event) => {
          if (event.object.metadata.name === watcherName && predicate(event.object)) resolve(event.object);
        })
        .then((watch) => (stop = () => watch.stop()));
    });
    await stop();
    return found;
  }

  /** Each rule's results as `event id → state`. */
  async function results(): Promise<Record<string, Record<string, string>>> {
    return Object.fromEntries(
      (await rules.withResults()).map(({ rule, results: rs }) => [
        rule.id,
        Object.fromEntries(rs.map((r) => [r.eventId, r.state])),
      ]),
    );
  }

  /** Runs the worker on the suite's deps (with `overrides`) until stop(). */
  function start(overrides: Partial<CameraWatcherWorkerDeps> = {}): { stop(): Promise<void> } {
    const abort = new AbortController();
    const run = cameraWatcherWorker({ ...deps, ...overrides })({
      namespace: NS,
      name: watcherName,
      index: 0,
      completions: 1,
      signal: abort.signal,
    });
    return {
      stop: async () => {
        abort.abort();
        await run;
      },
    };
  }

  /** A handler that records `type:rule:state` of each outcome for event `id` (only its: a message of an earlier test
   * may still be on its way from the broker), handing everything to the suite's handler. */
  function recordingOutcomes(id: string): { handler: CameraWatcherWorkerDeps['handler']; outcomes: string[] } {
    const outcomes: string[] = [];
    const handler = {
      handle: async (...args: Parameters<CameraWatcherWorkerDeps['handler']['handle']>) => {
        const found = await deps.handler.handle(...args);
        if (args[1].id === id) found.forEach((o) => outcomes.push(`${args[0]}:${o.ruleId}:${o.state}`));
        return found;
      },
    };
    return { handler, outcomes };
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'camera-watcher-'));
    store = await EmbeddedResourceStore.open({ dir });
    broker = await startBroker();
    frigate = new FakeFrigate({ front_door: {}, garage: {} }, { broker: broker.url });
    await frigate.start();
    feed = new FrigateEventFeed({ broker: broker.url, topicPrefix: 'frigate', logger, reconnectMs: 50 });
    feed.start();
    rules = new RuleBook(store, NS, logger);
    await rules.add({
      id: 'describe',
      label: 'person',
      action: 'summarize',
      camera: null,
      source: null,
      event_type: 'end',
    });
    await rules.add({
      id: 'arrivals',
      label: 'person',
      action: 'summarize',
      camera: null,
      source: null,
      event_type: 'new',
    });
    const recorder = new FrigateRecorder({ url: frigate.url, timeoutMs: 5000 });
    const notes = new EventNotes();
    const refuse = async () => {
      throw new Error('not used by these rules');
    };
    const handler = new EventHandler({
      rules,
      recorder,
      search: { add: refuse },
      alerts: { send: refuse },
      summarizer: new OfflineSummarizer(),
      notes,
      alertTools: [],
      logger,
      sleep: async () => undefined,
    });
    deps = { resources: store, recorder, feed, handler, notes, logger, pollMs: 60_000, sleep: pollSleep };
    const created = await store.create('CameraWatcher', {
      apiVersion: API_VERSION,
      kind: 'CameraWatcher',
      metadata: { name: watcherName, namespace: NS },
      spec: { camera: 'front_door', enabled: true },
    });
    // A previous run handled everything up to T0.
    await store.updateStatus('CameraWatcher', { ...created, status: { lastEventStart: T0, eventsHandled: 5 } });
  });

  afterAll(async () => {
    await feed?.close();
    await frigate?.close();
    await broker?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('the camera-watcher worker', () => {
    let worker: { stop(): Promise<void> };

    it('catches up after the last event handled: new then end, oldest first, only its camera', async () => {
      frigate.addEvent({ id: 'old', camera: 'front_door', start_time: T0 - 10, end_time: T0 - 5 });
      frigate.addEvent({ id: 'e2', camera: 'front_door', start_time: T0 + 10, end_time: T0 + 15 });
      frigate.addEvent({ id: 'e3', camera: 'front_door', start_time: T0 + 20 });
      frigate.addEvent({ id: 'other', camera: 'garage', start_time: T0 + 12, end_time: T0 + 13 });
      const slept = nextSleep();
      worker = start();
      await slept;
      expect(await results()).toEqual({
        describe: { e2: 'succeeded' },
        arrivals: { e3: 'succeeded', e2: 'succeeded' },
      });
      const watcher = await store.get('CameraWatcher', NS, watcherName);
      // e3 is still in progress: the catch-up point stays before it.
      expect(watcher?.status).toMatchObject({ lastEventId: 'e2', lastEventStart: T0 + 10, eventsHandled: 6 });
      expect(frigate.requests.find((r) => r.path === '/api/events')?.query).toMatchObject({
        camera: 'front_door',
        // The catch-up point's own moment is read again: an event sharing it may not have been handled.
        after: String(T0 - 1e-6),
      });
    });

    it("handles the feed's end event, then moves the catch-up point past it", async () => {
      frigate.events.find((e) => e.id === 'e3')!.end_time = T0 + 25;
      const handled = watcherWhen((w) => w.status?.eventsHandled === 7);
      await frigate.publishEvent('end', 'e3');
      expect((await handled).status).toMatchObject({ lastEventId: 'e3', lastEventStart: T0 + 20 });
      expect((await results()).describe).toEqual({ e3: 'succeeded', e2: 'succeeded' });
    });

    it('catches up on what it missed while the broker was away, once it has resubscribed', async () => {
      await broker.stop();
      frigate.addEvent({ id: 'e4', camera: 'front_door', start_time: T0 + 30, end_time: T0 + 31 });
      const handled = watcherWhen((w) => w.status?.eventsHandled === 8);
      await broker.start();
      expect((await handled).status).toMatchObject({ lastEventId: 'e4', lastEventStart: T0 + 30 });
    });

    it('processes no event twice: a repeated message, or after a restart of the worker', async () => {
      const before = await results();
      await frigate.publishEvent('end', 'e2');
      await worker.stop();
      const slept = nextSleep();
      worker = start();
      await slept;
      expect(await results()).toEqual(before);
      expect(Object.keys(before.describe)).toEqual(['e4', 'e3', 'e2']);
      const watcher = await store.get('CameraWatcher', NS, watcherName);
      expect(watcher?.status?.eventsHandled).toBe(8);
      const counts = Object.fromEntries((await rules.list()).map((r) => [r.id, r.count]));
      expect(counts).toEqual({ describe: 3, arrivals: 3 });
      await worker.stop();
    });

    it("leaves an event another replica's claim holds, offers it again, and moves on once it is settled", async () => {
      frigate.addEvent({ id: 'e5', camera: 'front_door', start_time: T0 + 40, end_time: T0 + 41 });
      // Another replica claimed e5 for `describe` a moment ago and is running the action.
      expect(await rules.claim('describe', 'e5', 'front_door', new Date(), 60_000)).toBe('claimed');
      const { handler, outcomes } = recordingOutcomes('e5');
      let slept = nextSleep();
      const running = start({ handler });
      await slept;
      expect(outcomes).toEqual(['new:arrivals:succeeded', 'end:describe:held']);
      expect((await results()).describe.e5).toBe('pending');
      // The catch-up point stays before e5.
      expect((await store.get('CameraWatcher', NS, watcherName))?.status).toMatchObject({ lastEventStart: T0 + 30 });

      await rules.settle('describe', 'e5', { state: 'succeeded', attempts: 1, updatedAt: new Date().toISOString() });
      slept = nextSleep();
      asleep.pop()?.();
      await slept;
      // Its end is offered again (its new was done): the claim is settled, so nothing runs twice.
      expect(outcomes.slice(2)).toEqual(['end:describe:duplicate']);
      await running.stop();
    });

    it('catches up oldest first, a bounded number per round, so nothing is skipped after a long outage', async () => {
      for (let i = 6; i <= 9; i++) {
        frigate.addEvent({ id: `e${i}`, camera: 'front_door', start_time: T0 + 10 * i, end_time: T0 + 10 * i + 1 });
      }
      let slept = nextSleep();
      const running = start({ catchUpMax: 3 });
      await slept;
      // e4 (the catch-up point's own moment, read again), e5 (settled before) and e6: the oldest three from the
      // catch-up point (one more asked for: whether the next event shares e6's start).
      expect(frigate.requests.filter((r) => r.path === '/api/events').at(-1)?.query).toMatchObject({
        sort: 'date_asc',
        limit: '4',
      });
      let handled = Object.keys((await results()).describe);
      expect(handled).toContain('e6');
      expect(handled).not.toContain('e7');
      slept = nextSleep();
      asleep.pop()?.();
      await slept;
      handled = Object.keys((await results()).describe);
      expect(handled).toEqual(expect.arrayContaining(['e7', 'e8']));
      expect(handled).not.toContain('e9');
      expect((await store.get('CameraWatcher', NS, watcherName))?.status).toMatchObject({
        lastEventId: 'e8',
        lastEventStart: T0 + 80,
      });
      await running.stop();
    });

    it('misses no event sharing its start time with the last one a round or a page ended on', async () => {
      // e9 waits from the test before; e10 and e11 started at the same moment (the directory recorder's segment and
      // a class seen in its first frame always do).
      for (const id of ['e10', 'e11']) {
        frigate.addEvent({ id, camera: 'front_door', start_time: T0 + 100, end_time: T0 + 101 });
      }
      let slept = nextSleep();
      const running = start({ catchUpMax: 2 });
      await slept;
      slept = nextSleep();
      asleep.pop()?.();
      await slept;
      expect(Object.keys((await results()).describe)).toEqual(expect.arrayContaining(['e9', 'e10', 'e11']));
      await running.stop();
    });

    it('handles after a restart an event that shares its start with the last one settled before the stop', async () => {
      // A run settled e12 and stopped before e13, which started at the same moment.
      for (const id of ['e12', 'e13']) {
        frigate.addEvent({ id, camera: 'front_door', start_time: T0 + 110, end_time: T0 + 111 });
      }
      for (const rule of ['describe', 'arrivals']) {
        expect(await rules.claim(rule, 'e12', 'front_door', new Date(), 60_000)).toBe('claimed');
        await rules.settle(rule, 'e12', { state: 'succeeded', attempts: 1, updatedAt: new Date().toISOString() });
      }
      const latest = (await store.get('CameraWatcher', NS, watcherName))!;
      await store.updateStatus('CameraWatcher', {
        ...latest,
        status: { ...latest.status, lastEventId: 'e12', lastEventStart: T0 + 110 },
      });
      const counts = async () => Object.fromEntries((await rules.list()).map((r) => [r.id, r.count]));
      const before = await counts();
      const slept = nextSleep();
      const running = start();
      await slept;
      expect((await results()).describe).toMatchObject({ e12: 'succeeded', e13: 'succeeded' });
      // e13 once for each rule; e12 not again.
      expect(await counts()).toEqual({ describe: before.describe + 1, arrivals: before.arrivals + 1 });
      await running.stop();
    });

    it('keeps the catch-up point before an event whose `new` another replica holds, though its `end` is done', async () => {
      frigate.addEvent({ id: 'e14', camera: 'front_door', start_time: T0 + 120, end_time: T0 + 121 });
      // Another replica claimed e14's `new` rule a moment ago and is running it (it may die before it settles).
      expect(await rules.claim('arrivals', 'e14', 'front_door', new Date(), 60_000)).toBe('claimed');
      const { handler, outcomes } = recordingOutcomes('e14');
      let slept = nextSleep();
      const running = start({ handler });
      await slept;
      expect(outcomes).toEqual(['new:arrivals:held', 'end:describe:succeeded']);
      const point = (await store.get('CameraWatcher', NS, watcherName))?.status?.lastEventStart ?? Infinity;
      expect(point).toBeLessThan(T0 + 120);

      await rules.settle('arrivals', 'e14', { state: 'succeeded', attempts: 1, updatedAt: new Date().toISOString() });
      slept = nextSleep();
      asleep.pop()?.();
      await slept;
      // Its `new` is offered again (its end was done): settled by the other replica, so nothing runs twice.
      expect(outcomes.slice(2)).toEqual(['new:arrivals:duplicate']);
      await running.stop();
    });

    it('returns at once for a disabled or missing watcher', async () => {
      const latest = (await store.get('CameraWatcher', NS, watcherName))!;
      await store.update('CameraWatcher', { ...latest, spec: { ...latest.spec, enabled: false } });
      const signal = new AbortController().signal;
      await cameraWatcherWorker(deps)({ namespace: NS, name: watcherName, index: 0, completions: 1, signal });
      await cameraWatcherWorker(deps)({ namespace: NS, name: 'nobody', index: 0, completions: 1, signal });
      expect(asleep.length).toBeGreaterThan(0);
    });
  });
}

describe('on aedes (in-process)', () => watcherSuite(startTestBroker));
const mosquittoSkip = mosquittoMissing();
(mosquittoSkip ? describe.skip : describe)(mosquittoSkip ?? 'on mosquitto (Debian)', () =>
  watcherSuite(startMosquitto),
);
