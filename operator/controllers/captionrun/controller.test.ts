import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import client from 'prom-client';
import { CAPTION_RUN_WORKER, type CaptionRun, type CaptionRunStatus } from '../../api/index.js';
import { EmbeddedResourceStore, EmbeddedWorkloadDriver } from '../../drivers/embedded/index.js';
import {
  updateStatusWithRetry,
  updateWithRetry,
  type ResourceStore,
  type Worker,
  type WorkerContext,
} from '../../ports/index.js';
import { captureLogs } from '../../../test/support/logs.js';
import { startControllers, type RunningControllers } from '../index.js';
import type { ControllerSettings } from '../settings.js';

const config = (retention = { count: 100, maxAgeSeconds: 86400 }): ControllerSettings => ({
  ingest: { parallelism: 1, backoffLimit: 0, pendingDeadlineSeconds: 600 },
  retention: { count: 100, maxAgeSeconds: 86400 },
  captionRunRetention: retention,
  resyncSeconds: 3600,
});

let dir: string;
let store: EmbeddedResourceStore;
let driver: EmbeddedWorkloadDriver;
let running: RunningControllers | undefined;
let clock: Date;
const { logger } = captureLogs({ level: 'error' });

async function open() {
  store = await EmbeddedResourceStore.open({ dir });
  driver = new EmbeddedWorkloadDriver({ restartDelayMs: () => 3_600_000 });
}

async function close() {
  await running?.stop();
  running = undefined;
  await driver.close();
  await store.close();
}

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'argus-captionrun-'));
  clock = new Date('2026-05-01T10:00:00Z');
  await open();
});
afterEach(async () => {
  await close();
  await fs.rm(dir, { recursive: true, force: true });
});

async function start(cfg = config()) {
  running = await startControllers({
    store,
    driver,
    config: cfg,
    logger,
    registry: new client.Registry(),
    now: () => clock,
  });
}

/** Resolves with the run once `done` holds for it (undefined: deleted), on every change the store reports. */
async function runWhen(name: string, done: (run: CaptionRun | undefined) => boolean): Promise<CaptionRun | undefined> {
  let resolve!: (run: CaptionRun | undefined) => void;
  const seen = new Promise<CaptionRun | undefined>((r) => (resolve = r));
  const watch = await store.watch('CaptionRun', 'default', (event) => {
    if (event.object.metadata.name !== name) return;
    const run = event.type === 'DELETED' ? undefined : event.object;
    if (done(run)) resolve(run);
  });
  const current = await store.get('CaptionRun', 'default', name);
  if (done(current)) resolve(current);
  const run = await seen;
  await watch.stop();
  return run;
}

const phaseIs = (phase: string) => (run: CaptionRun | undefined) => run?.status?.phase === phase;
const condition = (run: CaptionRun | undefined, type: string) => run?.status?.conditions?.find((c) => c.type === type);

/**
 * A caption worker as caption-runs implements the contract: Starting, then Running once `frames` lets it read (or
 * Failed when told), counters in status; on its signal it ends the run Stopped when it was asked to stop.
 */
function captionWorker(resources: ResourceStore) {
  const runs: WorkerContext[] = [];
  let openStream!: (outcome: 'frames' | 'fail') => void;
  let stream = new Promise<'frames' | 'fail'>((resolve) => (openStream = resolve));
  const write = (ctx: WorkerContext, change: Partial<CaptionRunStatus>) =>
    updateStatusWithRetry(resources, 'CaptionRun', ctx.namespace, ctx.name, (latest) => ({
      ...latest.status,
      ...change,
    }));
  const worker: Worker = async (ctx) => {
    runs.push(ctx);
    await write(ctx, { phase: 'Starting', message: 'opening the stream', startTime: '2026-05-01T10:00:00Z' });
    const aborted = new Promise<'aborted'>((resolve) =>
      ctx.signal.addEventListener('abort', () => resolve('aborted'), { once: true }),
    );
    const outcome = await Promise.race([stream, aborted]);
    if (outcome === 'fail') {
      await write(ctx, {
        phase: 'Failed',
        message: 'the stream could not be read',
        finishedTime: '2026-05-01T10:01:00Z',
      });
      return;
    }
    if (outcome === 'frames') {
      await write(ctx, { phase: 'Running', message: 'captioning', framesProcessed: 10, captionsPublished: 2 });
      await aborted;
    }
    const latest = await resources.get('CaptionRun', ctx.namespace, ctx.name);
    if (latest?.spec.stopRequested) await write(ctx, { phase: 'Stopped', message: 'stopped on request' });
  };
  return {
    runs,
    worker,
    frames: () => openStream('frames'),
    fail: () => openStream('fail'),
    reset: () => (stream = new Promise((resolve) => (openStream = resolve))),
  };
}

async function createRun(name: string): Promise<CaptionRun> {
  return store.create('CaptionRun', {
    apiVersion: 'argus.dev/v1alpha1',
    kind: 'CaptionRun',
    metadata: { name, namespace: 'default' },
    spec: {
      rtspUrl: 'rtsp://127.0.0.1:8554/front',
      prompt: 'Describe the scene',
      modelName: 'offline',
      pipelineName: 'default',
      runName: name,
      maxTokens: 64,
    },
  });
}

/** What DELETE does in caption-runs: spec.stopRequested, with conflict retry. */
async function stop(name: string): Promise<void> {
  await updateWithRetry(store, 'CaptionRun', 'default', name, (run) => ({
    ...run,
    spec: { ...run.spec, stopRequested: true },
  }));
}

describe('CaptionRun controller with the embedded drivers', () => {
  it('Starting while the worker opens the stream, Running once it reads, Stopped on request; the counters are kept', async () => {
    const caption = captionWorker(store);
    driver.register(CAPTION_RUN_WORKER, caption.worker);
    await start();
    await createRun('front');
    const starting = await runWhen('front', (r) => phaseIs('Starting')(r) && !!condition(r, 'Progressing'));
    expect(condition(starting, 'Progressing')).toMatchObject({ status: 'True' });
    expect(condition(starting, 'Ready')).toMatchObject({ status: 'False' });
    caption.frames();
    const runningRun = await runWhen('front', (r) => phaseIs('Running')(r) && condition(r, 'Ready')?.status === 'True');
    expect(runningRun?.status).toMatchObject({ framesProcessed: 10, captionsPublished: 2, observedGeneration: 1 });
    expect(condition(runningRun, 'Ready')).toMatchObject({ reason: 'Running', observedGeneration: 1 });
    expect(condition(runningRun, 'Progressing')).toMatchObject({ status: 'False', reason: 'Running' });
    expect(condition(runningRun, 'Degraded')).toMatchObject({ status: 'False' });
    await stop('front');
    const stopped = await runWhen('front', (r) => phaseIs('Stopped')(r) && condition(r, 'Ready')?.reason === 'Stopped');
    expect(caption.runs[0].signal.aborted).toBe(true);
    expect(stopped?.status).toMatchObject({
      message: 'stopped on request',
      finishedTime: '2026-05-01T10:00:00Z',
      framesProcessed: 10,
      captionsPublished: 2,
      observedGeneration: 2,
    });
    expect(condition(stopped, 'Degraded')).toMatchObject({ status: 'False', reason: 'Stopped' });
    expect(await driver.inspect(stopped!, 'long-running')).toBeUndefined();
    expect(caption.runs).toHaveLength(1);
  });

  it('Failed as the worker reports it: the workload is removed and not restarted; Degraded=True/Failed', async () => {
    const caption = captionWorker(store);
    driver.register(CAPTION_RUN_WORKER, caption.worker);
    await start();
    await createRun('broken');
    await runWhen('broken', phaseIs('Starting'));
    caption.fail();
    const failed = await runWhen('broken', (r) => phaseIs('Failed')(r) && condition(r, 'Degraded')?.status === 'True');
    expect(failed?.status).toMatchObject({
      message: 'the stream could not be read',
      finishedTime: '2026-05-01T10:01:00Z',
    });
    expect(condition(failed, 'Degraded')).toMatchObject({ reason: 'Failed' });
    expect(await driver.inspect(failed!, 'long-running')).toBeUndefined();
    expect(caption.runs).toHaveLength(1);
  });

  it('a run asked to stop before any worker ran is Stopped by the controller; a deleted run stops its worker', async () => {
    await start();
    await createRun('early');
    await runWhen('early', phaseIs('Starting'));
    await stop('early');
    const stopped = await runWhen('early', phaseIs('Stopped'));
    expect(stopped?.status).toMatchObject({ message: 'stopped on request', finishedTime: '2026-05-01T10:00:00Z' });
    expect(condition(stopped, 'Ready')).toMatchObject({ status: 'False', reason: 'Stopped' });

    const caption = captionWorker(store);
    driver.register(CAPTION_RUN_WORKER, caption.worker);
    await createRun('gone');
    caption.frames();
    await runWhen('gone', phaseIs('Running'));
    await store.delete('CaptionRun', 'default', 'gone');
    await new Promise<void>((resolve) => caption.runs[0].signal.addEventListener('abort', () => resolve()));
    expect(caption.runs.map((r) => r.name)).toEqual(['gone']);
  });

  it('keeps finished runs by count and age (retention), never a run that has not finished', async () => {
    await start(config({ count: 1, maxAgeSeconds: 3600 }));
    for (const name of ['r1', 'r2', 'r3']) {
      await createRun(name);
      await runWhen(name, phaseIs('Starting'));
    }
    await stop('r1');
    await runWhen('r1', phaseIs('Stopped'));
    clock = new Date('2026-05-01T10:10:00Z');
    await stop('r2');
    // r2 finished last: r1 goes (count 1).
    expect(await runWhen('r1', (r) => r === undefined)).toBeUndefined();
    expect((await store.get('CaptionRun', 'default', 'r2'))?.status?.phase).toBe('Stopped');
    // An hour after r2 finished, a sweep (a new start of the controllers) removes it too; r3 still runs.
    await running!.stop();
    clock = new Date('2026-05-01T11:10:00Z');
    await start(config({ count: 1, maxAgeSeconds: 3600 }));
    expect(await runWhen('r2', (r) => r === undefined)).toBeUndefined();
    expect((await store.get('CaptionRun', 'default', 'r3'))?.status?.phase).toBe('Starting');
  });

  it('after a restart of the process a run that was running gets its worker again; a stopped one does not', async () => {
    const first = captionWorker(store);
    driver.register(CAPTION_RUN_WORKER, first.worker);
    await start();
    await createRun('live');
    await createRun('done');
    first.frames();
    await runWhen('live', phaseIs('Running'));
    await runWhen('done', phaseIs('Running'));
    await stop('done');
    await runWhen('done', phaseIs('Stopped'));
    await close();
    await open();
    const second = captionWorker(store);
    driver.register(CAPTION_RUN_WORKER, second.worker);
    await start();
    second.frames();
    const resumed = await runWhen('live', (r) => phaseIs('Running')(r) && second.runs.length === 1);
    expect(resumed?.status?.framesProcessed).toBe(10);
    expect(second.runs.map((r) => r.name)).toEqual(['live']);
  });
});
