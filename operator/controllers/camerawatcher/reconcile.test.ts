import { describe, expect, it } from '@jest/globals';
import type { CameraWatcher } from '../../api/index.js';
import type { WorkloadStatus } from '../../ports/index.js';
import { decideCameraWatcher } from './reconcile.js';

const NOW = '2026-05-01T10:00:00Z';

function watcher(enabled: boolean, status?: CameraWatcher['status']): CameraWatcher {
  return {
    apiVersion: 'argus.dev/v1alpha1',
    kind: 'CameraWatcher',
    metadata: { name: 'front', namespace: 'default', uid: 'u1', generation: 2 },
    spec: { camera: 'front', enabled },
    ...(status ? { status } : {}),
  };
}

const workload = (over: Partial<WorkloadStatus>): WorkloadStatus => ({
  active: 1,
  ready: 0,
  succeeded: 0,
  failed: 0,
  complete: false,
  restarts: 0,
  ...over,
});

describe('decideCameraWatcher', () => {
  it("keeps the worker's fields, moves lastTransitionTime only on a status change, decides the same again", () => {
    const fields = { lastEventId: 'e1', lastEventStart: 1_700_000_000, eventsHandled: 3 };
    const first = decideCameraWatcher({ watcher: watcher(true, fields), workload: workload({ ready: 1 }), now: NOW });
    expect(first.status).toMatchObject({ ...fields, phase: 'Watching', observedGeneration: 2 });
    const later = '2026-05-01T11:00:00Z';
    const again = decideCameraWatcher({
      watcher: watcher(true, first.status),
      workload: workload({ ready: 1 }),
      now: later,
    });
    expect(again.status).toEqual(first.status);
    const waiting = decideCameraWatcher({
      watcher: watcher(true, first.status),
      workload: workload({ waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } }),
      now: later,
    });
    expect(waiting.status.phase).toBe('Pending');
    expect(waiting.status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ImagePullBackOff',
      lastTransitionTime: later,
    });
    expect(waiting.status.conditions?.find((c) => c.type === 'Degraded')?.lastTransitionTime).toBe(NOW);
  });

  it('enabled without a workload: ensure it; disabled with one: remove it; ProgressDeadlineExceeded: Failed', () => {
    expect(decideCameraWatcher({ watcher: watcher(true), workload: undefined, now: NOW })).toMatchObject({
      ensureWorkload: true,
      removeWorkload: false,
      status: { phase: 'Pending' },
    });
    expect(decideCameraWatcher({ watcher: watcher(false), workload: workload({}), now: NOW })).toMatchObject({
      ensureWorkload: false,
      removeWorkload: true,
      status: { phase: 'Stopped', message: 'the watcher is disabled' },
    });
    const stuck = decideCameraWatcher({
      watcher: watcher(true),
      workload: workload({ active: 0, waiting: { reason: 'ProgressDeadlineExceeded', message: 'timed out' } }),
      now: NOW,
    });
    expect(stuck).toMatchObject({ ensureWorkload: false, removeWorkload: false, status: { phase: 'Failed' } });
    expect(stuck.status.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ProgressDeadlineExceeded',
    });
  });
});
