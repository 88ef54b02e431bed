/**
 * camera-rules: 50 cameras each followed by its camera-watcher worker (all in this process, sharing one Frigate MQTT
 * feed, as embedded), 200 rules in the embedded resource store (50 cameras × person/car/dog/bicycle, action alert:
 * each event matches exactly one), and Frigate-shaped events at 20/s across the cameras (each tracked object sends
 * `new`, `update` and `end`, as Frigate does). Measured in the same run:
 *
 * - baseline: the broker's own publish → receive, for the same `end` messages, by a plain MQTT subscriber in this
 *   process (QoS 1, as the feed subscribes);
 * - event → action started: from publishing an `end` to the rule's action being called (the feed, the watcher's queue,
 *   matching the rules, the claim written to the store with conflict retry). The action itself is a stub that records
 *   the time (events have no snapshot), so the figure is camera-rules' own path, not alert-dispatch's. Rules are
 *   matched from the rule cache (the store's watch), as the runtime does;
 * - the watchers' CPU per event: this process's CPU over the loaded phase minus the same phase without watchers
 *   (publisher and baseline subscriber alone), divided by the events.
 *
 * The broker is Debian's mosquitto (its own process) where installed, else aedes in this process (its CPU then cancels
 * out in the subtraction). The fake Frigate answers the watchers' catch-ups over HTTP on loopback. Bounded durations.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import mqtt from 'mqtt';
import { API_VERSION } from '../operator/api/index.js';
import { EmbeddedResourceStore } from '../operator/drivers/embedded/index.js';
import { realSleep } from '../services/camera-rules/actions/retry.js';
import { OfflineSummarizer } from '../services/camera-rules/actions/summarizer.js';
import { EventHandler } from '../services/camera-rules/events/event-handler.js';
import { EventNotes } from '../services/camera-rules/events/event-notes.js';
import { FrigateEventFeed } from '../services/camera-rules/recorder/frigate-events.js';
import { FrigateRecorder } from '../services/camera-rules/recorder/frigate-recorder.js';
import { RuleBook } from '../services/camera-rules/rules/rule-book.js';
import { RuleCache } from '../services/camera-rules/rules/rule-cache.js';
import { FakeFrigate } from '../services/camera-rules/testing/fake-frigate.js';
import { cameraWatcherWorker } from '../services/camera-rules/watcher/camera-watcher.js';
import { watcherObjectName } from '../services/camera-rules/watchers/watcher-book.js';
import { createLogger } from '../services/lib/log/index.js';
import { mosquittoMissing, startMosquitto } from '../test/support/mosquitto.js';
import { startTestBroker, type TestBroker } from '../test/support/mqtt-broker.js';
import { latencyStats } from './latency-stats.js';

const CAMERAS = 50;
const LABELS = ['person', 'car', 'dog', 'bicycle'];
const RATE_PER_S = 20;
const PHASE_MS = 15_000;
/** Longest wait for the last actions after the last publish. */
const DRAIN_MS = 30_000;
const NS = 'bench';

const cameraName = (i: number) => `cam_${String(i).padStart(2, '0')}`;
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

/**
 * Publishes tracked objects at RATE_PER_S across the cameras for PHASE_MS, starting at Unix time `base`; calls
 * `sent(id)` just before each `end`.
 */
async function publishEvents(
  frigate: FakeFrigate,
  phase: string,
  base: number,
  sent: (id: string) => void,
): Promise<string[]> {
  const count = Math.round((PHASE_MS / 1000) * RATE_PER_S);
  const ids: string[] = [];
  const startedAt = performance.now();
  for (let i = 0; i < count; i++) {
    const due = startedAt + (i * 1000) / RATE_PER_S;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const id = `${base + i / RATE_PER_S}-${phase}${i}`;
    frigate.addEvent({
      id,
      camera: cameraName(i % CAMERAS),
      label: LABELS[Math.floor(i / CAMERAS) % LABELS.length],
      start_time: base + i / RATE_PER_S,
      end_time: base + i / RATE_PER_S + 2,
      has_snapshot: false,
      has_clip: false,
    });
    await frigate.publishEvent('new', id);
    await frigate.publishEvent('update', id);
    sent(id);
    await frigate.publishEvent('end', id);
    ids.push(id);
  }
  return ids;
}

/** A plain subscriber timing the `end` messages it receives, against their publish times. */
async function baselineSubscriber(url: string, published: Map<string, number>) {
  const received = new Map<string, number>();
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  client.on('message', (_topic, payload) => {
    const at = performance.now();
    const message = JSON.parse(payload.toString('utf8')) as { type: string; after: { id: string } };
    if (message.type === 'end') received.set(message.after.id, at - (published.get(message.after.id) ?? at));
  });
  await client.subscribeAsync('frigate/events', { qos: 1 });
  return { received, close: () => client.endAsync(true) };
}

export default async function run(): Promise<void> {
  const missing = mosquittoMissing();
  const broker: TestBroker = missing ? await startTestBroker() : await startMosquitto();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-bench-'));
  const logger = createLogger({ service: 'camera-rules-bench', level: 'error', json: true });
  logger.silent = true;
  const cameras = Object.fromEntries(Array.from({ length: CAMERAS }, (_, i) => [cameraName(i), {}]));
  const frigate = new FakeFrigate(cameras, { broker: broker.url });
  await frigate.start();
  const store = await EmbeddedResourceStore.open({ dir: path.join(dir, 'control-plane') });
  const rules = new RuleBook(store, NS, logger);
  for (let c = 0; c < CAMERAS; c++) {
    for (const label of LABELS) {
      await rules.add({
        id: `${label} on ${cameraName(c)}`,
        label,
        action: 'alert',
        camera: cameraName(c),
        source: null,
        event_type: 'end',
      });
    }
  }
  console.log(
    `broker: ${missing ? 'aedes in this process (mosquitto not installed)' : 'Debian mosquitto (own process)'}; ` +
      `${CAMERAS} cameras with watchers, ${CAMERAS * LABELS.length} rules, ${RATE_PER_S} events/s for ` +
      `${PHASE_MS / 1000} s (new, update, end each)`,
  );

  try {
    // Phase A: no watchers — the publisher and the baseline subscriber alone (CPU to subtract).
    const publishedA = new Map<string, number>();
    const subA = await baselineSubscriber(broker.url, publishedA);
    const cpuA0 = process.cpuUsage();
    // Events of this phase start before the watchers exist, so their catch-ups leave them alone.
    const idsA = await publishEvents(frigate, 'a', Math.floor(Date.now() / 1000) - 3600, (id) =>
      publishedA.set(id, performance.now()),
    );
    const cpuA = process.cpuUsage(cpuA0);
    await subA.close();

    // Phase B: 50 watchers over one feed, the same load, the baseline subscriber alongside.
    const started = new Map<string, number>();
    const publishedB = new Map<string, number>();
    let allStarted: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (allStarted = resolve));
    let expected = Infinity;
    const notes = new EventNotes();
    const refuse = async () => {
      throw new Error('not used by the benchmark rules');
    };
    const matching = new RuleCache(store, NS);
    const handler = new EventHandler({
      rules,
      matching,
      recorder: new FrigateRecorder({ url: frigate.url, timeoutMs: 5000 }),
      search: { add: refuse },
      alerts: {
        send: async (alert) => {
          const id = String(alert.metadata.event_id);
          started.set(id, performance.now() - (publishedB.get(id) ?? NaN));
          if (started.size >= expected) allStarted();
          return 'recorded';
        },
      },
      summarizer: new OfflineSummarizer(),
      notes,
      alertTools: [],
      logger,
      sleep: realSleep,
    });
    const feed = new FrigateEventFeed({ broker: broker.url, topicPrefix: 'frigate', logger });
    const subscribed = new Promise<void>((resolve) => feed.onSubscribed(() => resolve()));
    feed.start();
    await subscribed;
    const aborts: AbortController[] = [];
    const workers: Array<Promise<void>> = [];
    for (let c = 0; c < CAMERAS; c++) {
      const name = watcherObjectName(cameraName(c));
      await store.create('CameraWatcher', {
        apiVersion: API_VERSION,
        kind: 'CameraWatcher',
        metadata: { name, namespace: NS },
        spec: { camera: cameraName(c), enabled: true },
      });
      const worker = cameraWatcherWorker({
        resources: store,
        recorder: new FrigateRecorder({ url: frigate.url, timeoutMs: 5000 }),
        feed,
        handler,
        notes,
        logger,
        pollMs: 3_600_000,
        sleep: realSleep,
      });
      const abort = new AbortController();
      aborts.push(abort);
      workers.push(worker({ namespace: NS, name, index: 0, completions: 1, signal: abort.signal }));
    }
    // Let the watchers' first catch-ups (HTTP to the fake Frigate) finish before the load.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const subB = await baselineSubscriber(broker.url, publishedB);
    const cpuB0 = process.cpuUsage();
    const idsB = await publishEvents(frigate, 'b', Math.floor(Date.now() / 1000) + 10, (id) =>
      publishedB.set(id, performance.now()),
    );
    expected = idsB.length;
    if (started.size >= expected) allStarted();
    const drained = await Promise.race([
      done.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), DRAIN_MS)),
    ]);
    const cpuB = process.cpuUsage(cpuB0);
    // The broker's last deliveries to the baseline subscriber (bounded).
    for (let i = 0; i < 100 && subB.received.size < idsB.length; i++) await new Promise((r) => setTimeout(r, 20));
    await subB.close();
    aborts.forEach((abort) => abort.abort());
    await Promise.all(workers);
    await feed.close();
    await matching.close();

    const broker_ = latencyStats([...subB.received.values()]);
    const action = latencyStats([...started.values()]);
    const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;
    const perEvent = (cpuMs(cpuB) - cpuMs(cpuA)) / idsB.length;
    console.log(
      `baseline, broker publish → receive (plain subscriber, ${subB.received.size} end messages): ` +
        `p50 ${fmt(broker_.p50)}, p99 ${fmt(broker_.p99)}`,
    );
    console.log(
      `event end published → rule action started (${started.size}/${idsB.length} events${drained ? '' : ', NOT all within the drain time'}): ` +
        `p50 ${fmt(action.p50)}, p99 ${fmt(action.p99)} = ${(action.p99 / broker_.p99).toFixed(1)}× the broker's p99`,
    );
    console.log(
      `watchers' CPU per event: ${perEvent.toFixed(2)} ms (this process ${cpuMs(cpuB).toFixed(0)} ms with watchers, ` +
        `${cpuMs(cpuA).toFixed(0)} ms without, ${idsA.length} events each; ${((perEvent * RATE_PER_S) / 10).toFixed(1)}% of one core at ${RATE_PER_S}/s)`,
    );
  } finally {
    await frigate.close();
    await store.close();
    await broker.close();
    await rm(dir, { recursive: true, force: true });
  }
}
