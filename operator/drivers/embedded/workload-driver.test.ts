import { describe, expect, it } from '@jest/globals';
import type { IngestJob } from '../../api/index.js';
import type { WorkerContext, WorkloadStatus } from '../../ports/index.js';
import { newIngestJob } from '../../ports/resource-store.contract.js';
import { EmbeddedWorkloadDriver } from './workload-driver.js';

function job(name: string, uid = `uid-${name}`): IngestJob {
  const fresh = newIngestJob(name);
  return { ...fresh, metadata: { ...fresh.metadata, uid } } as IngestJob;
}

/** A promise with its resolve function outside. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves once the workload of `owner` satisfies `done`, checked on every change the driver reports. */
function until(driver: EmbeddedWorkloadDriver, owner: IngestJob, done: (s: WorkloadStatus | undefined) => boolean) {
  return new Promise<WorkloadStatus | undefined>((resolve) => {
    const check = async () => {
      const status = await driver.inspect(owner);
      if (done(status)) {
        stop();
        resolve(status);
      }
    };
    const stop = driver.onChange(() => void check());
    void check();
  });
}

const spec = (over: Partial<{ completions: number; parallelism: number; backoffLimit: number }> = {}) => ({
  worker: 'ingest',
  completions: 3,
  parallelism: 3,
  backoffLimit: 0,
  ...over,
});

describe('EmbeddedWorkloadDriver', () => {
  it('runs every shard once with its index, at most `parallelism` at once, and completes', async () => {
    const driver = new EmbeddedWorkloadDriver();
    const started: WorkerContext[] = [];
    const gates = new Map<number, ReturnType<typeof deferred<void>>>();
    const running = deferred<void>();
    driver.register('ingest', async (ctx) => {
      started.push(ctx);
      const gate = deferred<void>();
      gates.set(ctx.index, gate);
      if (gates.size === 2) running.resolve();
      await gate.promise;
    });
    const owner = job('job-a');
    await driver.ensure(owner, spec({ completions: 4, parallelism: 2 }));
    await running.promise;
    expect(await driver.inspect(owner)).toMatchObject({ active: 2, ready: 2, succeeded: 0, complete: false });
    expect(started.map((c) => c.index)).toEqual([0, 1]);
    gates.get(0)!.resolve();
    await until(driver, owner, (s) => s?.active === 2 && s.succeeded === 1);
    expect(started.map((c) => c.index)).toEqual([0, 1, 2]);
    for (const index of [1, 2]) gates.get(index)!.resolve();
    await until(driver, owner, () => gates.has(3));
    gates.get(3)!.resolve();
    const done = await until(driver, owner, (s) => !!s?.complete);
    expect(done).toMatchObject({ active: 0, succeeded: 4, failed: 0, complete: true, startTime: expect.any(String) });
    expect(started.every((c) => c.namespace === 'default' && c.name === 'job-a' && c.completions === 4)).toBe(true);
    await driver.close();
  });

  it('runs a shard that threw again, and completes when the retry succeeds', async () => {
    const driver = new EmbeddedWorkloadDriver({ retryDelayMs: () => 0 });
    const attempts: number[] = [];
    driver.register('ingest', async ({ index }) => {
      attempts.push(index);
      if (attempts.filter((i) => i === index).length === 1 && index === 1) throw new Error('store unreachable');
    });
    const owner = job('job-a');
    await driver.ensure(owner, spec({ backoffLimit: 1 }));
    const done = await until(driver, owner, (s) => !!s?.complete);
    expect(done).toMatchObject({ succeeded: 3, failed: 1 });
    expect(attempts.filter((i) => i === 1)).toHaveLength(2);
    await driver.close();
  });

  it('fails the workload after more than backoffLimit failures and aborts its other shards', async () => {
    const errors: string[] = [];
    const driver = new EmbeddedWorkloadDriver({
      retryDelayMs: () => 0,
      onShardError: (_owner, index, error) => errors.push(`${index}: ${(error as Error).message}`),
    });
    const aborted = deferred<void>();
    const waiting = deferred<void>();
    driver.register('ingest', async ({ index, signal }) => {
      if (index === 0) {
        waiting.resolve();
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        aborted.resolve();
        return;
      }
      await waiting.promise;
      throw new Error('disk full');
    });
    const owner = job('job-a');
    await driver.ensure(owner, spec({ completions: 2, parallelism: 2, backoffLimit: 2 }));
    const failed = await until(driver, owner, (s) => !!s?.failure);
    await aborted.promise;
    expect(failed?.failure).toEqual({
      reason: 'BackoffLimitExceeded',
      message: 'the worker failed 3 times (backoffLimit 2); last failure, shard 1: disk full',
    });
    expect(errors).toEqual(['1: disk full', '1: disk full', '1: disk full']);
    expect(await driver.inspect(owner)).toMatchObject({ complete: false, succeeded: 0, failed: 3 });
    await driver.close();
  });

  it('keeps a workload whose worker is not registered pending, and starts it on registration', async () => {
    const driver = new EmbeddedWorkloadDriver();
    const owner = job('job-a');
    await driver.ensure(owner, spec());
    expect(await driver.inspect(owner)).toEqual({
      active: 0,
      ready: 0,
      succeeded: 0,
      failed: 0,
      complete: false,
      waiting: { reason: 'WorkerNotRegistered', message: 'no worker named "ingest" is registered in this process' },
    });
    driver.register('ingest', async () => undefined);
    expect(await until(driver, owner, (s) => !!s?.complete)).toMatchObject({ succeeded: 3 });
    await driver.close();
  });

  it('leaves an existing workload as it is, and replaces one whose owner was recreated (other uid)', async () => {
    const driver = new EmbeddedWorkloadDriver();
    const calls: string[] = [];
    const hold = deferred();
    driver.register('ingest', async ({ index, name }) => {
      calls.push(`${name}#${index}`);
      await hold.promise;
    });
    const first = job('job-a', 'uid-1');
    await driver.ensure(first, spec({ completions: 1 }));
    await driver.ensure(first, spec({ completions: 1 }));
    await until(driver, first, (s) => s?.active === 1);
    expect(calls).toEqual(['job-a#0']);
    const second = job('job-a', 'uid-2');
    expect(await driver.inspect(second)).toBeUndefined();
    await driver.ensure(second, spec({ completions: 1 }));
    expect(await driver.inspect(first)).toBeUndefined();
    hold.resolve();
    await until(driver, second, (s) => !!s?.complete);
    expect(calls).toEqual(['job-a#0', 'job-a#0']);
    await driver.close();
  });

  it('remove aborts the shards and forgets the workload; close waits for shards to return', async () => {
    const driver = new EmbeddedWorkloadDriver();
    const started = deferred();
    let returned = false;
    driver.register('ingest', async ({ signal }) => {
      started.resolve();
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      await new Promise((resolve) => setImmediate(resolve));
      returned = true;
    });
    const owner = job('job-a');
    await driver.ensure(owner, spec({ completions: 1 }));
    await started.promise;
    await driver.remove(owner);
    expect(await driver.inspect(owner)).toBeUndefined();
    await driver.close();
    expect(returned).toBe(true);
    await expect(driver.ensure(owner, spec())).rejects.toThrow(/closed/);
  });
});
