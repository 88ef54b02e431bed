import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import client from 'prom-client';
import type { IngestItem, IngestJob } from '../../api/index.js';
import type { ControllerSettings } from '../settings.js';
import { EmbeddedResourceStore, EmbeddedWorkloadDriver } from '../../drivers/embedded/index.js';
import type { ResourceStore } from '../../ports/index.js';
import { newIngestJob } from '../../ports/resource-store.contract.js';
import { captureLogs } from '../../../test/support/logs.js';
import { startControllers, type RunningControllers } from '../index.js';
import { controllerMetrics } from '../runtime/metrics.js';
import { IngestJobController } from './controller.js';
import { SKIPPED_BY_CANCEL } from './reconcile.js';
import { itemWorker, type ItemOutcome } from './testing/item-worker.js';
import { INGEST_WORKER } from '../../api/index.js';

const config = (
  over: Partial<ControllerSettings['ingest']> = {},
  retention = { count: 100, maxAgeSeconds: 86400 },
) => ({
  ingest: { parallelism: 1, backoffLimit: 0, pendingDeadlineSeconds: 600, ...over },
  retention,
  captionRunRetention: { count: 100, maxAgeSeconds: 86400 },
  resyncSeconds: 3600,
});

/** A promise with its resolve function outside. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

let dir: string;
let store: EmbeddedResourceStore;
let driver: EmbeddedWorkloadDriver;
let running: RunningControllers | undefined;
let registry: client.Registry;
const { logger } = captureLogs({ level: 'error' });

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'argus-ingest-'));
  store = await EmbeddedResourceStore.open({ dir });
  driver = new EmbeddedWorkloadDriver({ retryDelayMs: () => 0 });
  registry = new client.Registry();
});
afterEach(async () => {
  await running?.stop();
  running = undefined;
  await driver.close();
  await store.close();
  await fs.rm(dir, { recursive: true, force: true });
});

async function start(cfg: ControllerSettings = config()) {
  running = await startControllers({ store, driver, config: cfg, logger, registry });
}

/** Resolves with the job once `done` holds for it, checked on every change the store reports. */
async function jobWhen(name: string, done: (job: IngestJob) => boolean): Promise<IngestJob> {
  const seen = deferred<IngestJob>();
  const watch = await store.watch('IngestJob', 'default', (event) => {
    if (event.object.metadata.name === name && event.type !== 'DELETED' && done(event.object))
      seen.resolve(event.object);
  });
  const job = await seen.promise;
  await watch.stop();
  return job;
}

const stateIs = (state: string) => (job: IngestJob) => job.status?.state === state;

/** A worker whose items succeed unless `outcome` says otherwise, recording the indexes it processed. */
function recordingWorker(
  outcome: (item: IngestItem, index: number, signal: AbortSignal) => Promise<ItemOutcome | void>,
) {
  const processed: number[] = [];
  const worker = itemWorker(store, async (item, index, signal) => {
    const result = await outcome(item, index, signal);
    processed.push(index);
    return result ?? { status: 'success', embeddingsCount: 1 };
  });
  return { processed, worker };
}

async function cancel(name: string): Promise<void> {
  const job = (await store.get('IngestJob', 'default', name))!;
  await store.update('IngestJob', { ...job, spec: { ...job.spec, cancelRequested: true } });
}

describe('IngestJob controller with the embedded drivers', () => {
  it('pending until a worker runs, running while it works, completed when every item succeeded', async () => {
    await start();
    await store.create('IngestJob', newIngestJob('job-a', 'default', 3));
    const pending = await jobWhen('job-a', stateIs('pending'));
    expect(pending.status).toMatchObject({ total: 3, progress: '0/3', observedGeneration: 1 });
    const gate = deferred();
    const { processed, worker } = recordingWorker(async (_item, index) => {
      if (index === 0) await gate.promise;
    });
    driver.register(INGEST_WORKER, worker);
    const working = await jobWhen('job-a', stateIs('running'));
    expect(working.status?.startTime).toEqual(expect.any(String));
    gate.resolve();
    const done = await jobWhen('job-a', stateIs('completed'));
    expect(processed).toEqual([0, 1, 2]);
    expect(done.status).toMatchObject({ total: 3, completed: 3, failed: 0, skipped: 0, progress: '3/3' });
    expect(done.status?.completionTime).toEqual(expect.any(String));
    expect(done.status?.items?.map((i) => [i.index, i.videoId, i.status, i.embeddingsCount])).toEqual([
      [0, 'video-0', 'success', 1],
      [1, 'video-1', 'success', 1],
      [2, 'video-2', 'success', 1],
    ]);
    expect(done.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Completed',
    });
    const metrics = await registry.getMetricsAsJSON();
    const reconciles = metrics.find((m) => m.name === 'argus_controller_reconcile_total');
    expect(reconciles?.values.find((v) => v.labels.result === 'success')?.value).toBeGreaterThan(0);
    expect(metrics.map((m) => m.name)).toEqual(
      expect.arrayContaining([
        'argus_controller_reconcile_duration_seconds',
        'argus_controller_queue_depth',
        'argus_controller_errors_total',
      ]),
    );
  });

  it('isolates items: one that fails is an error result and the others still run (completed_with_errors)', async () => {
    const { processed, worker } = recordingWorker(async (item) => {
      if (item.identifier === 'item-1.mp4') throw new Error('not a video: moov atom not found');
    });
    driver.register(INGEST_WORKER, worker);
    await start();
    await store.create('IngestJob', newIngestJob('job-a', 'default', 3));
    const done = await jobWhen('job-a', stateIs('completed_with_errors'));
    expect(processed).toEqual([0, 2]);
    expect(done.status).toMatchObject({ completed: 2, failed: 1 });
    expect(done.status?.items?.[1]).toMatchObject({ status: 'error', message: 'not a video: moov atom not found' });
    expect(done.status?.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ItemsFailed',
    });
  });

  it('failed when no item succeeded', async () => {
    driver.register(
      INGEST_WORKER,
      itemWorker(store, async () => ({ status: 'error', message: 'unreadable' })),
    );
    await start();
    await store.create('IngestJob', newIngestJob('job-a', 'default', 2));
    expect((await jobWhen('job-a', stateIs('failed'))).status).toMatchObject({ failed: 2, completed: 0 });
  });

  it('shares the items between parallel shards, each item processed exactly once', async () => {
    const { processed, worker } = recordingWorker(async () => undefined);
    driver.register(INGEST_WORKER, worker);
    await start(config({ parallelism: 3 }));
    await store.create('IngestJob', newIngestJob('job-a', 'default', 10));
    const done = await jobWhen('job-a', stateIs('completed'));
    expect([...processed].sort((a, b) => a - b)).toEqual([...Array(10).keys()]);
    expect(done.status?.items?.map((i) => i.index)).toEqual([...Array(10).keys()]);
  });

  it('cancelling a pending job skips every item (cancelled) and its worker never runs', async () => {
    await start();
    await store.create('IngestJob', newIngestJob('job-a', 'default', 3));
    await jobWhen('job-a', stateIs('pending'));
    await cancel('job-a');
    const done = await jobWhen('job-a', stateIs('cancelled'));
    expect(done.status).toMatchObject({ skipped: 3, completed: 0, progress: '3/3', observedGeneration: 2 });
    expect(done.status?.items?.every((i) => i.status === 'skipped' && i.message === SKIPPED_BY_CANCEL)).toBe(true);
    expect(await driver.inspect(done)).toBeUndefined();
    const { processed, worker } = recordingWorker(async () => undefined);
    driver.register(INGEST_WORKER, worker);
    expect(processed).toEqual([]);
  });

  it('cancelling a running job: the worker stops before its next item, unstarted items are skipped', async () => {
    const inItem = deferred();
    const release = deferred();
    const { processed, worker } = recordingWorker(async (_item, index) => {
      if (index === 1) {
        inItem.resolve();
        await release.promise;
      }
    });
    driver.register(INGEST_WORKER, worker);
    await start();
    await store.create('IngestJob', newIngestJob('job-a', 'default', 4));
    await inItem.promise;
    await cancel('job-a');
    await jobWhen('job-a', (job) => job.status?.conditions?.some((c) => c.reason === 'Cancelling') ?? false);
    release.resolve();
    const done = await jobWhen('job-a', stateIs('cancelled'));
    expect(processed).toEqual([0, 1]);
    expect(done.status?.items?.map((i) => i.status)).toEqual(['success', 'success', 'skipped', 'skipped']);
    expect(done.status).toMatchObject({ completed: 2, skipped: 2, failed: 0 });
  });

  it('a worker that fails with retries exhausted: the items it left fail with a clear message', async () => {
    // The worker's store refuses the write of item 1's result: the worker cannot go on, so its shard throws.
    const unreachable: ResourceStore = Object.assign(Object.create(store) as ResourceStore, {
      updateStatus: async (kind: 'IngestJob', object: IngestJob) => {
        if (object.status?.items?.some((r) => r.index === 1)) throw new Error('resource store unreachable');
        return store.updateStatus(kind, object);
      },
    });
    const processed: number[] = [];
    driver.register(
      INGEST_WORKER,
      itemWorker(unreachable, async (_item, index) => {
        processed.push(index);
        return { status: 'success' };
      }),
    );
    await start(config({ backoffLimit: 1 }));
    await store.create('IngestJob', newIngestJob('job-a', 'default', 3));
    const done = await jobWhen('job-a', stateIs('completed_with_errors'));
    expect(processed).toEqual([0, 1, 1]);
    expect(done.status?.items?.map((i) => i.status)).toEqual(['success', 'error', 'error']);
    expect(done.status?.items?.[2].message).toMatch(
      /^not processed: the job's workers failed and were not retried again \(BackoffLimitExceeded\): the worker failed 2 times \(backoffLimit 1\); last failure, shard 0: resource store unreachable/,
    );
    expect(done.status?.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'WorkerFailed',
    });
  });

  it('a job whose worker never starts fails at its pending deadline, naming why, with one Event per step', async () => {
    const events: string[] = [];
    let now = new Date();
    const controller = new IngestJobController({
      store,
      driver,
      config: config({ pendingDeadlineSeconds: 60 }),
      logger,
      metrics: controllerMetrics(registry),
      now: () => now,
      events: { record: async (_job, e) => void events.push(`${e.type} ${e.reason}`) },
    });
    await controller.start();
    try {
      const created = await store.create('IngestJob', newIngestJob('stuck', 'default', 2));
      // No worker named "ingest" is registered in this process: the embedded driver says so.
      const waiting = await jobWhen('stuck', (j) =>
        (j.status?.conditions ?? []).some((c) => c.reason === 'WorkerNotRegistered'),
      );
      expect(waiting.status?.state).toBe('pending');
      now = new Date(Date.parse(created.metadata.creationTimestamp!) + 60_000);
      // Any change reconciles it now (the controller also asks to be requeued at the deadline).
      await store.update('IngestJob', { ...waiting, metadata: { ...waiting.metadata, labels: { seen: 'yes' } } });
      const failed = await jobWhen('stuck', stateIs('failed'));
      expect(failed.status?.items?.map((i) => i.message)).toEqual([
        'not processed: no worker started within 60 s (WorkerNotRegistered): no worker named "ingest" is registered in this process',
        'not processed: no worker started within 60 s (WorkerNotRegistered): no worker named "ingest" is registered in this process',
      ]);
      expect(failed.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
        status: 'False',
        reason: 'PendingDeadlineExceeded',
      });
      expect(await driver.inspect(failed)).toBeUndefined();
      expect(events).toEqual(['Normal JobCreated', 'Warning WorkerNotRegistered', 'Warning PendingDeadlineExceeded']);
    } finally {
      await controller.stop();
    }
  });

  it('deleting a running job aborts its worker', async () => {
    const inItem = deferred();
    const aborted = deferred();
    driver.register(
      INGEST_WORKER,
      itemWorker(store, async (_item, _index, signal) => {
        inItem.resolve();
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        aborted.resolve();
        signal.throwIfAborted();
        return { status: 'success' };
      }),
    );
    await start();
    const job = await store.create('IngestJob', newIngestJob('job-a', 'default', 2));
    await inItem.promise;
    await store.delete('IngestJob', 'default', 'job-a');
    await aborted.promise;
    expect(await driver.inspect(job)).toBeUndefined();
  });
});

describe('IngestJob retention', () => {
  it('keeps the newest finished jobs per namespace up to the count', async () => {
    driver.register(
      INGEST_WORKER,
      itemWorker(store, async () => ({ status: 'success' })),
    );
    await start(config({}, { count: 2, maxAgeSeconds: 86400 }));
    for (const name of ['job-1', 'job-2', 'job-3']) {
      await store.create('IngestJob', newIngestJob(name, 'default', 1));
      await jobWhen(name, stateIs('completed'));
    }
    const gone = deferred();
    const watch = await store.watch('IngestJob', 'default', (e) => e.type === 'DELETED' && gone.resolve());
    await gone.promise;
    await watch.stop();
    expect((await store.list('IngestJob')).map((j) => j.metadata.name).sort()).toEqual(['job-2', 'job-3']);
  });

  it('deletes finished jobs past the age limit and leaves running ones', async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const hold = deferred();
    driver.register(
      INGEST_WORKER,
      itemWorker(store, async (item) => {
        if (item.identifier.startsWith('item-1')) await hold.promise;
        return { status: 'success' };
      }),
    );
    const controller = new IngestJobController({
      store,
      driver,
      config: config({}, { count: 100, maxAgeSeconds: 3600 }),
      logger,
      metrics: controllerMetrics(registry),
      now: () => now,
    });
    await controller.start();
    try {
      await store.create('IngestJob', newIngestJob('finished', 'default', 1));
      await jobWhen('finished', stateIs('completed'));
      await store.create('IngestJob', newIngestJob('busy', 'default', 2));
      await jobWhen('busy', stateIs('running'));
      await controller.sweep();
      expect((await store.list('IngestJob')).map((j) => j.metadata.name).sort()).toEqual(['busy', 'finished']);
      now = new Date('2026-01-01T01:00:00Z');
      await controller.sweep();
      expect((await store.list('IngestJob')).map((j) => j.metadata.name)).toEqual(['busy']);
      hold.resolve();
      await jobWhen('busy', stateIs('completed'));
    } finally {
      await controller.stop();
    }
  });
});
