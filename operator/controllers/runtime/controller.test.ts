import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import client from 'prom-client';
import type { IngestJob } from '../../api/index.js';
import { EmbeddedResourceStore } from '../../drivers/embedded/index.js';
import { newIngestJob } from '../../ports/resource-store.contract.js';
import { captureLogs } from '../../../test/support/logs.js';
import { Controller, type ObjectKey, type ReconcileResult } from './controller.js';
import { controllerMetrics } from './metrics.js';

let dir: string;
let store: EmbeddedResourceStore;
let registry: client.Registry;
let controller: Controller<'IngestJob'> | undefined;
const { logger } = captureLogs({ level: 'error' });

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'argus-runtime-'));
  store = await EmbeddedResourceStore.open({ dir });
  registry = new client.Registry();
});
afterEach(async () => {
  await controller?.stop();
  controller = undefined;
  await store.close();
  await fs.rm(dir, { recursive: true, force: true });
});

/** Calls of reconcile, with a way to wait for the nth. */
function recorder(answer: (call: number, key: ObjectKey) => ReconcileResult | void | Promise<never>) {
  const calls: string[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const reconcile = async (key: ObjectKey) => {
    calls.push(`${key.namespace}/${key.name}`);
    for (const w of waiters.filter((w) => calls.length >= w.n)) w.resolve();
    return answer(calls.length, key);
  };
  const nth = (n: number) =>
    calls.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }));
  return { calls, reconcile, nth };
}

async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

function start(
  reconcile: (key: ObjectKey) => Promise<ReconcileResult | void>,
  deleted?: (job: IngestJob) => Promise<void>,
) {
  controller = new Controller({
    name: 'test',
    kind: 'IngestJob',
    store,
    reconcile,
    deleted,
    resyncMs: 3600_000,
    backOff: { baseMs: 1, maxMs: 1 },
    logger,
    metrics: controllerMetrics(registry),
  });
  return controller.start();
}

describe('Controller', () => {
  it('reconciles existing objects at start and every change after', async () => {
    await store.create('IngestJob', newIngestJob('job-a'));
    const r = recorder(() => undefined);
    await start(r.reconcile);
    await r.nth(1);
    const job = (await store.get('IngestJob', 'default', 'job-a'))!;
    await store.updateStatus('IngestJob', { ...job, status: { state: 'running' } });
    await r.nth(2);
    expect(r.calls).toEqual(['default/job-a', 'default/job-a']);
    // The first reconcile was counted before the second began (one reconcile per object at a time).
    expect(
      await metricValue('argus_controller_reconcile_total', { controller: 'test', result: 'success' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('retries a failed reconcile with back-off and counts the error', async () => {
    await store.create('IngestJob', newIngestJob('job-a'));
    const r = recorder((call) => (call === 1 ? Promise.reject(new Error('API server unavailable')) : undefined));
    await start(r.reconcile);
    await r.nth(2);
    expect(await metricValue('argus_controller_reconcile_total', { controller: 'test', result: 'error' })).toBe(1);
    expect(await metricValue('argus_controller_errors_total', { controller: 'test' })).toBe(1);
  });

  it('reconciles again after the delay a reconcile asks for, without an event', async () => {
    await store.create('IngestJob', newIngestJob('job-a'));
    const r = recorder((call) => (call === 1 ? { requeueAfterMs: 0 } : undefined));
    await start(r.reconcile);
    await r.nth(2);
    expect(await metricValue('argus_controller_reconcile_total', { controller: 'test', result: 'requeue' })).toBe(1);
  });

  it('tells about a deleted object once, with its last state, and reconciles keys it is given', async () => {
    const created = await store.create('IngestJob', newIngestJob('job-a'));
    const r = recorder(() => undefined);
    const gone: IngestJob[] = [];
    let resolveDeleted!: () => void;
    const deleted = new Promise<void>((resolve) => (resolveDeleted = resolve));
    await start(r.reconcile, async (job) => {
      gone.push(job);
      resolveDeleted();
    });
    await r.nth(1);
    await store.delete('IngestJob', 'default', 'job-a');
    await deleted;
    expect(gone.map((j) => j.metadata.uid)).toEqual([created.metadata.uid]);
    controller!.enqueue({ namespace: 'elsewhere', name: 'job-z' });
    await r.nth(2);
    expect(r.calls).toEqual(['default/job-a', 'elsewhere/job-z']);
  });

  it('reconciles nothing once stopped', async () => {
    const r = recorder(() => undefined);
    await start(r.reconcile);
    await controller!.stop();
    controller!.enqueue({ namespace: 'default', name: 'job-a' });
    await store.create('IngestJob', newIngestJob('job-a'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.calls).toEqual([]);
  });
});
