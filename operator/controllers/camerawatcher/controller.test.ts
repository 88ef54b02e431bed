import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import client from 'prom-client';
import { CAMERA_WATCHER_WORKER, type CameraWatcher } from '../../api/index.js';
import { EmbeddedResourceStore, EmbeddedWorkloadDriver } from '../../drivers/embedded/index.js';
import { updateStatusWithRetry, type ResourceStore, type Worker, type WorkerContext } from '../../ports/index.js';
import { captureLogs } from '../../../test/support/logs.js';
import { startControllers, type RunningControllers } from '../index.js';
import type { ControllerSettings } from '../settings.js';

const CONFIG: ControllerSettings = {
  ingest: { parallelism: 1, backoffLimit: 0, pendingDeadlineSeconds: 600 },
  retention: { count: 100, maxAgeSeconds: 86400 },
  captionRunRetention: { count: 100, maxAgeSeconds: 86400 },
  resyncSeconds: 3600,
};

let dir: string;
let store: EmbeddedResourceStore;
let driver: EmbeddedWorkloadDriver;
let running: RunningControllers | undefined;
const { logger } = captureLogs({ level: 'error' });

async function open() {
  store = await EmbeddedResourceStore.open({ dir });
  driver = new EmbeddedWorkloadDriver({ restartDelayMs: () => 0 });
}

async function close() {
  await running?.stop();
  running = undefined;
  await driver.close();
  await store.close();
}

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'argus-camerawatcher-'));
  await open();
});
afterEach(async () => {
  await close();
  await fs.rm(dir, { recursive: true, force: true });
});

async function start() {
  running = await startControllers({ store, driver, config: CONFIG, logger, registry: new client.Registry() });
}

/** Resolves with the watcher once `done` holds for it, checked on every change the store reports. */
async function watcherWhen(name: string, done: (w: CameraWatcher) => boolean): Promise<CameraWatcher> {
  let resolve!: (w: CameraWatcher) => void;
  const seen = new Promise<CameraWatcher>((r) => (resolve = r));
  const watch = await store.watch('CameraWatcher', 'default', (event) => {
    if (event.object.metadata.name === name && event.type !== 'DELETED' && done(event.object)) resolve(event.object);
  });
  const watcher = await seen;
  await watch.stop();
  return watcher;
}

const phaseIs = (phase: string) => (w: CameraWatcher) => w.status?.phase === phase;
const condition = (w: CameraWatcher, type: string) => w.status?.conditions?.find((c) => c.type === type);

/**
 * A camera-watcher worker as camera-rules implements the contract: returns at once when the watcher is missing or
 * disabled; else writes its own status fields (one "event" handled per start) and runs until its signal fires.
 */
function watcherWorker(resources: ResourceStore, failFirst = 0) {
  const runs: WorkerContext[] = [];
  let failures = failFirst;
  const worker: Worker = async (ctx) => {
    runs.push(ctx);
    const watcher = await resources.get('CameraWatcher', ctx.namespace, ctx.name);
    if (!watcher?.spec.enabled) return;
    if (failures > 0) {
      failures--;
      throw new Error('the recorder feed is unreachable');
    }
    await updateStatusWithRetry(resources, 'CameraWatcher', ctx.namespace, ctx.name, (latest) => ({
      ...latest.status,
      lastEventId: `event-${runs.length}`,
      lastEventStart: 1_700_000_000 + runs.length,
      eventsHandled: (latest.status?.eventsHandled ?? 0) + 1,
    }));
    if (!ctx.signal.aborted) {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    }
  };
  return { runs, worker };
}

async function createWatcher(name: string, enabled: boolean): Promise<CameraWatcher> {
  return store.create('CameraWatcher', {
    apiVersion: 'argus.dev/v1alpha1',
    kind: 'CameraWatcher',
    metadata: { name, namespace: 'default' },
    spec: { camera: name.replace(/-/g, '_'), enabled },
  });
}

async function setEnabled(name: string, enabled: boolean): Promise<void> {
  const watcher = (await store.get('CameraWatcher', 'default', name))!;
  await store.update('CameraWatcher', { ...watcher, spec: { ...watcher.spec, enabled } });
}

describe('CameraWatcher controller with the embedded drivers', () => {
  it('keeps one worker per enabled watcher: Pending, then Watching; the worker fields are never clobbered; no no-op writes', async () => {
    await start();
    await createWatcher('front-door', true);
    // No worker is registered yet: the watcher waits, and says why.
    const pending = await watcherWhen('front-door', phaseIs('Pending'));
    expect(condition(pending, 'Ready')).toMatchObject({ status: 'False', reason: 'WorkerNotRegistered' });
    expect(condition(pending, 'Progressing')).toMatchObject({ status: 'True', reason: 'WorkerNotRegistered' });
    const { runs, worker } = watcherWorker(store);
    driver.register(CAMERA_WATCHER_WORKER, worker);
    const watching = await watcherWhen('front-door', (w) => phaseIs('Watching')(w) && w.status?.eventsHandled === 1);
    expect(watching.status).toMatchObject({
      phase: 'Watching',
      lastEventId: 'event-1',
      lastEventStart: 1_700_000_001,
      eventsHandled: 1,
      observedGeneration: 1,
    });
    expect(condition(watching, 'Ready')).toMatchObject({ status: 'True', reason: 'Watching', observedGeneration: 1 });
    expect(condition(watching, 'Progressing')).toMatchObject({ status: 'False', reason: 'Watching' });
    expect(condition(watching, 'Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });
    expect(runs.map((r) => [r.namespace, r.name, r.index, r.completions])).toEqual([['default', 'front-door', 0, 1]]);
    // The controllers start again (a leader change): nothing to change, nothing written.
    const version = (await store.get('CameraWatcher', 'default', 'front-door'))!.metadata.resourceVersion;
    await running!.stop();
    await start();
    await createWatcher('marker', false);
    await watcherWhen('marker', phaseIs('Stopped'));
    const after = (await store.get('CameraWatcher', 'default', 'front-door'))!;
    expect(after.metadata.resourceVersion).toBe(version);
    expect(runs).toHaveLength(1);
  });

  it('disabled: the worker stops and the watcher is Stopped; enabled again: a new worker; deleted: its worker stops', async () => {
    const { runs, worker } = watcherWorker(store);
    driver.register(CAMERA_WATCHER_WORKER, worker);
    await start();
    await createWatcher('back-yard', true);
    await watcherWhen('back-yard', (w) => phaseIs('Watching')(w) && w.status?.eventsHandled === 1);
    await setEnabled('back-yard', false);
    const stopped = await watcherWhen('back-yard', phaseIs('Stopped'));
    expect(runs[0].signal.aborted).toBe(true);
    expect(condition(stopped, 'Ready')).toMatchObject({ status: 'False', reason: 'Disabled', observedGeneration: 2 });
    // The worker's fields stay as the worker left them.
    expect(stopped.status).toMatchObject({ lastEventId: 'event-1', eventsHandled: 1, observedGeneration: 2 });
    expect(await driver.inspect(stopped, 'long-running')).toBeUndefined();
    await setEnabled('back-yard', true);
    const again = await watcherWhen('back-yard', (w) => phaseIs('Watching')(w) && w.status?.eventsHandled === 2);
    expect(again.status).toMatchObject({ lastEventId: 'event-2', observedGeneration: 3 });
    expect(runs).toHaveLength(2);
    await store.delete('CameraWatcher', 'default', 'back-yard');
    await new Promise<void>((resolve) => runs[1].signal.addEventListener('abort', () => resolve(), { once: true }));
    expect(runs[1].signal.aborted).toBe(true);
  });

  it('a worker that throws is restarted after a back-off: Degraded=True/WorkerRestarting while it is down', async () => {
    // The back-off is an hour: the degraded status is what the watcher shows meanwhile.
    await driver.close();
    const delays: number[] = [];
    driver = new EmbeddedWorkloadDriver({
      restartDelayMs: (inRow) => {
        delays.push(inRow);
        return 3_600_000;
      },
    });
    const { runs, worker } = watcherWorker(store, 1);
    driver.register(CAMERA_WATCHER_WORKER, worker);
    await start();
    await createWatcher('side-gate', true);
    const degraded = await watcherWhen('side-gate', (w) => condition(w, 'Degraded')?.reason === 'WorkerRestarting');
    expect(degraded.status?.phase).toBe('Pending');
    expect(condition(degraded, 'Degraded')).toMatchObject({
      status: 'True',
      message: 'the worker ended 1 times; last: the recorder feed is unreachable',
    });
    expect(condition(degraded, 'Ready')).toMatchObject({ status: 'False', reason: 'Starting' });
    expect(delays).toEqual([1]);
    // Disabling and enabling it again starts a fresh worker at once; it runs.
    await setEnabled('side-gate', false);
    await watcherWhen('side-gate', phaseIs('Stopped'));
    await setEnabled('side-gate', true);
    const recovered = await watcherWhen('side-gate', (w) => phaseIs('Watching')(w) && w.status?.eventsHandled === 1);
    expect(condition(recovered, 'Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });
    expect(runs).toHaveLength(2);
  });

  it('after a restart of the process the workers of enabled watchers run again, and no others', async () => {
    const first = watcherWorker(store);
    driver.register(CAMERA_WATCHER_WORKER, first.worker);
    await start();
    await createWatcher('one', true);
    await createWatcher('two', false);
    await watcherWhen('one', (w) => phaseIs('Watching')(w) && w.status?.eventsHandled === 1);
    await watcherWhen('two', phaseIs('Stopped'));
    await close();
    expect(first.runs[0].signal.aborted).toBe(true);
    await open();
    const second = watcherWorker(store);
    driver.register(CAMERA_WATCHER_WORKER, second.worker);
    await start();
    const resumed = await watcherWhen('one', (w) => w.status?.eventsHandled === 2);
    expect(resumed.status?.phase).toBe('Watching');
    expect(second.runs.map((r) => r.name)).toEqual(['one']);
  });
});
