import { describe, expect, it } from '@jest/globals';
import type { CameraWatcher } from '../../api/index.js';
import type { WorkerContext, WorkloadStatus } from '../../ports/index.js';
import { EmbeddedWorkloadDriver } from './workload-driver.js';

function watcher(name: string, uid = `uid-${name}`): CameraWatcher {
  return {
    apiVersion: 'argus.dev/v1alpha1',
    kind: 'CameraWatcher',
    metadata: { name, namespace: 'default', uid },
    spec: { camera: name, enabled: true },
  };
}

/** Resolves once the workload of `owner` satisfies `done`, checked on every change the driver reports. */
function until(driver: EmbeddedWorkloadDriver, owner: CameraWatcher, done: (s: WorkloadStatus | undefined) => boolean) {
  return new Promise<WorkloadStatus | undefined>((resolve) => {
    const check = async () => {
      const status = await driver.inspect(owner, 'long-running');
      if (done(status)) {
        stop();
        resolve(status);
      }
    };
    const stop = driver.onChange(() => void check());
    void check();
  });
}

const SPEC = { mode: 'long-running', worker: 'camera-watcher', replicas: 1 } as const;

describe('EmbeddedWorkloadDriver: long-running workloads', () => {
  it('restarts a worker that throws with a bounded back-off (restarts, last error), resets it after a long run, stops on remove', async () => {
    let clock = 0;
    const delays: number[] = [];
    const driver = new EmbeddedWorkloadDriver({
      // The back-off as asked for, by restarts in a row; the retry itself runs at once (no waiting in the test).
      restartDelayMs: (inRow) => {
        delays.push(Math.min(60_000, 1000 * 2 ** (inRow - 1)));
        return 0;
      },
      restartResetMs: 600_000,
      now: () => clock,
    });
    const calls: WorkerContext[] = [];
    let stopped: (() => void) | undefined;
    const stoppedOnce = new Promise<void>((resolve) => (stopped = resolve));
    driver.register('camera-watcher', async (ctx) => {
      calls.push(ctx);
      if (calls.length <= 3) throw new Error(`broker unreachable #${calls.length}`);
      if (calls.length === 4) {
        clock += 700_000; // a long healthy run before it fails again
        throw new Error('broker went away');
      }
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      stopped?.();
    });
    const owner = watcher('front-door');
    await driver.ensure(owner, SPEC);
    const running = await until(driver, owner, (s) => s?.restarts === 4 && s.active === 1);
    expect(running).toMatchObject({
      active: 1,
      ready: 1,
      restarts: 4,
      lastError: 'broker went away',
      complete: false,
      succeeded: 0,
      failed: 0,
    });
    expect(running?.failure).toBeUndefined();
    // 1 s, 2 s, 4 s in a row; the run that lasted past restartResetMs starts the back-off over.
    expect(delays).toEqual([1000, 2000, 4000, 1000]);
    expect(calls.map((c) => [c.namespace, c.name, c.index, c.completions])).toEqual(
      Array.from({ length: 5 }, () => ['default', 'front-door', 0, 1]),
    );
    await driver.remove(owner, 'long-running');
    await stoppedOnce;
    expect(calls[4].signal.aborted).toBe(true);
    expect(await driver.inspect(owner, 'long-running')).toBeUndefined();
    await driver.close();
  });

  it('restarts a worker that returns while it should run; a removed workload is not restarted', async () => {
    const driver = new EmbeddedWorkloadDriver({ restartDelayMs: () => 0 });
    let calls = 0;
    driver.register('camera-watcher', async () => {
      calls++;
    });
    const owner = watcher('back-yard');
    await driver.ensure(owner, SPEC);
    const status = await until(driver, owner, (s) => (s?.restarts ?? 0) >= 2);
    expect(status?.lastError).toBe('the worker returned while its workload should run');
    await driver.remove(owner, 'long-running');
    const after = calls;
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(calls).toBe(after);
    await driver.close();
  });

  it('waits for a worker that is not registered (WorkerNotRegistered) and starts it when it is', async () => {
    const driver = new EmbeddedWorkloadDriver();
    const owner = watcher('side-gate');
    await driver.ensure(owner, SPEC);
    expect(await driver.inspect(owner, 'long-running')).toMatchObject({
      active: 0,
      ready: 0,
      restarts: 0,
      waiting: { reason: 'WorkerNotRegistered' },
    });
    driver.register(
      'camera-watcher',
      (ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve())),
    );
    expect(await until(driver, owner, (s) => s?.ready === 1)).toMatchObject({ active: 1, ready: 1 });
    await driver.close();
  });
});
