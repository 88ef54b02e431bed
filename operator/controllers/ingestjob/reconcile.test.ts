import { describe, expect, it } from '@jest/globals';
import { ITEM_MESSAGE_MAX } from '../../api/index.js';
import type { IngestItemResult, IngestJob, IngestJobStatus } from '../../api/index.js';
import type { WorkloadStatus } from '../../ports/index.js';
import { newIngestJob } from '../../ports/resource-store.contract.js';
import { decideIngestJob, SKIPPED_BY_CANCEL, type IngestJobObservation } from './reconcile.js';

/** A decision with the operator's default pending deadline (600 s). */
const decide = (o: Omit<IngestJobObservation, 'pendingDeadlineSeconds'>) =>
  decideIngestJob({ pendingDeadlineSeconds: 600, ...o });

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';
const T2 = '2026-01-01T00:02:00Z';

function job(opts: { items?: number; status?: IngestJobStatus; cancel?: boolean; generation?: number } = {}) {
  const fresh = newIngestJob('job-a', 'default', opts.items ?? 3);
  return {
    ...fresh,
    metadata: { ...fresh.metadata, uid: 'uid', resourceVersion: '1', generation: opts.generation ?? 1 },
    spec: { ...fresh.spec, ...(opts.cancel ? { cancelRequested: true } : {}) },
    ...(opts.status ? { status: opts.status } : {}),
  } as IngestJob;
}

const result = (index: number, status: IngestItemResult['status'], extra: Partial<IngestItemResult> = {}) =>
  ({ index, identifier: `item-${index}.mp4`, videoId: `video-${index}`, status, ...extra }) as IngestItemResult;

const workload = (over: Partial<WorkloadStatus> = {}): WorkloadStatus => ({
  active: 0,
  ready: 0,
  succeeded: 0,
  failed: 0,
  complete: false,
  ...over,
});

/** The status after a decision, used as the job's status for the next one (as the controller writes it). */
function after(j: IngestJob, status: IngestJobStatus): IngestJob {
  return { ...j, status };
}

function condition(status: IngestJobStatus, type: string) {
  return status.conditions?.find((c) => c.type === type);
}

describe('decideIngestJob: workers that do not start', () => {
  const created = (j: IngestJob) => ({ ...j, metadata: { ...j.metadata, creationTimestamp: T0 } }) as IngestJob;
  const unschedulable = { reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.' };

  it('stays pending while pods exist but none is ready (a Job counts Pending pods as active), saying why', () => {
    const d = decide({
      job: created(job()),
      workload: workload({ active: 2, startTime: T0, waiting: unschedulable }),
      now: T1,
    });
    expect(d.status.state).toBe('pending');
    expect(d.status.startTime).toBeUndefined();
    expect(condition(d.status, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'Unschedulable',
      message: `the workers cannot start yet: ${unschedulable.message}`,
    });
    // Looked at again before the deadline (600 s from T0), at most every 30 s.
    expect(d.requeueAfterMs).toBe(30_000);
  });

  it('fails at the pending deadline with what the workers waited for, and removes the workload', () => {
    const j = { ...created(job()), spec: { ...job().spec, pendingDeadlineSeconds: 60 } } as IngestJob;
    const before = decide({
      job: j,
      workload: workload({ active: 2, waiting: unschedulable }),
      now: '2026-01-01T00:00:30Z',
    });
    expect(before).toMatchObject({ status: { state: 'pending' }, requeueAfterMs: 30_000, removeWorkload: false });
    const d = decide({ job: j, workload: workload({ active: 2, waiting: unschedulable }), now: T1 });
    expect(d).toMatchObject({ removeWorkload: true, ensureWorkload: false });
    expect(d.status).toMatchObject({ state: 'failed', failed: 3, completionTime: T1 });
    expect(d.status.items![0].message).toBe(
      `not processed: no worker started within 60 s (Unschedulable): ${unschedulable.message}`,
    );
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'False', reason: 'PendingDeadlineExceeded' });
    expect(condition(d.status, 'Degraded')).toMatchObject({ status: 'True', reason: 'Unschedulable' });
    expect(d.status.startTime).toBeUndefined();
  });

  it('the operator default applies without spec.pendingDeadlineSeconds; a running job has no pending deadline', () => {
    const late = '2026-01-01T00:10:00Z';
    expect(
      decideIngestJob({
        job: created(job()),
        workload: workload({ active: 1 }),
        now: late,
        pendingDeadlineSeconds: 600,
      }).status.state,
    ).toBe('failed');
    const running = created(job({ status: { state: 'running' } }));
    expect(decide({ job: running, workload: workload({ active: 1 }), now: late })).toMatchObject({
      status: { state: 'running' },
    });
  });

  it('cancel: a workload whose Job has a startTime but no worker running is idle: cancelled at once, workload removed', () => {
    const d = decide({
      job: created(job({ cancel: true })),
      workload: workload({ active: 2, ready: 0, startTime: T0, waiting: unschedulable }),
      now: T1,
    });
    expect(d).toMatchObject({ status: { state: 'cancelled', skipped: 3 }, removeWorkload: true });
  });
});

describe('decideIngestJob: pending and running', () => {
  it('a new job without a workload is pending and asks for its workload', () => {
    const d = decide({ job: job(), workload: undefined, now: T0 });
    expect(d).toMatchObject({ ensureWorkload: true, removeWorkload: false });
    expect(d.status).toMatchObject({
      state: 'pending',
      total: 3,
      completed: 0,
      failed: 0,
      skipped: 0,
      progress: '0/3',
      items: [],
      observedGeneration: 1,
    });
    expect(d.status.startTime).toBeUndefined();
    expect(d.status.completionTime).toBeUndefined();
    expect(d.status.conditions).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'Pending',
        message: expect.any(String),
        lastTransitionTime: T0,
        observedGeneration: 1,
      },
      {
        type: 'Progressing',
        status: 'True',
        reason: 'Pending',
        message: expect.any(String),
        lastTransitionTime: T0,
        observedGeneration: 1,
      },
      {
        type: 'Degraded',
        status: 'False',
        reason: 'AsExpected',
        message: expect.any(String),
        lastTransitionTime: T0,
        observedGeneration: 1,
      },
    ]);
  });

  it('stays pending while the workload exists but no worker runs yet', () => {
    const d = decide({ job: job(), workload: workload(), now: T0 });
    expect(d.status.state).toBe('pending');
    expect(d.ensureWorkload).toBe(true);
  });

  it('is running once a worker runs, from when the controller first saw one run (not the workload start time)', () => {
    const d = decide({ job: job(), workload: workload({ active: 1, ready: 1, startTime: T0 }), now: T1 });
    expect(d.status).toMatchObject({ state: 'running', startTime: T1, progress: '0/3' });
    expect(condition(d.status, 'Progressing')).toMatchObject({ status: 'True', reason: 'Running' });
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'False', reason: 'Running' });
  });

  it('is running when results exist but the workload is gone (restart), and asks for the workload again', () => {
    const j = job({ status: { items: [result(0, 'success', { embeddingsCount: 4 })] } });
    const d = decide({ job: j, workload: undefined, now: T1 });
    expect(d).toMatchObject({ ensureWorkload: true, removeWorkload: false });
    expect(d.status).toMatchObject({ state: 'running', startTime: T1, completed: 1, progress: '1/3' });
  });

  it('never goes back from running to pending (restart before the first result)', () => {
    const d = decide({
      job: job({ status: { state: 'running', startTime: T0 } }),
      workload: undefined,
      now: T1,
    });
    expect(d.status).toMatchObject({ state: 'running', startTime: T0 });
    expect(d.ensureWorkload).toBe(true);
  });

  it('counts item failures while running and says Degraded', () => {
    const j = job({ status: { state: 'running', items: [result(0, 'error', { message: 'not a video' })] } });
    const d = decide({ job: j, workload: workload({ active: 1, ready: 1, startTime: T0 }), now: T1 });
    expect(d.status).toMatchObject({ state: 'running', failed: 1, progress: '1/3' });
    expect(condition(d.status, 'Degraded')).toMatchObject({ status: 'True', reason: 'ItemsFailed' });
  });

  it('says Degraded (WorkerRestarted) when a worker failed and is retried', () => {
    const d = decide({ job: job(), workload: workload({ active: 1, ready: 1, failed: 1, startTime: T0 }), now: T1 });
    expect(condition(d.status, 'Degraded')).toMatchObject({ status: 'True', reason: 'WorkerRestarted' });
  });

  it('reports observedGeneration and ignores results of unknown indexes; the last result of an index wins', () => {
    const j = job({
      generation: 4,
      items: 2,
      status: { items: [result(1, 'error'), result(7, 'success'), result(1, 'success'), result(-1, 'success')] },
    });
    const d = decide({ job: j, workload: workload({ active: 1, ready: 1 }), now: T0 });
    expect(d.status.items).toEqual([result(1, 'success')]);
    expect(d.status).toMatchObject({ observedGeneration: 4, completed: 1, failed: 0, progress: '1/2' });
  });

  it('is a fixed point: deciding again on its own status changes nothing, whatever the time', () => {
    const j = job({ status: { items: [result(2, 'success'), result(0, 'error')] } });
    const first = decide({ job: j, workload: workload({ active: 1, ready: 1, startTime: T0 }), now: T1 });
    const second = decide({
      job: after(j, first.status),
      workload: workload({ active: 1, ready: 1, startTime: T0 }),
      now: T2,
    });
    expect(second.status).toEqual(first.status);
    expect(first.status.items?.map((i) => i.index)).toEqual([0, 2]);
  });

  it('moves lastTransitionTime only for conditions whose status changed', () => {
    const j = job();
    const pending = decide({ job: j, workload: undefined, now: T0 }).status;
    const running = decide({ job: after(j, pending), workload: workload({ active: 1, ready: 1 }), now: T1 }).status;
    expect(condition(running, 'Ready')?.lastTransitionTime).toBe(T0);
    const done = decide({
      job: after(j, { ...running, items: [0, 1, 2].map((i) => result(i, 'success')) }),
      workload: workload({ complete: true, succeeded: 1 }),
      now: T2,
    }).status;
    expect(condition(done, 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: T2 });
    expect(condition(done, 'Progressing')).toMatchObject({ status: 'False', lastTransitionTime: T2 });
    expect(condition(done, 'Degraded')).toMatchObject({ status: 'False', lastTransitionTime: T0 });
  });
});

describe('decideIngestJob: terminal states', () => {
  const running = (items: IngestItemResult[]) => job({ status: { state: 'running', startTime: T0, items } });

  it('completed: every item succeeded', () => {
    const d = decide({
      job: running([0, 1, 2].map((i) => result(i, 'success'))),
      workload: workload({ active: 1, ready: 1, startTime: T0 }),
      now: T1,
    });
    expect(d).toMatchObject({ ensureWorkload: false, removeWorkload: false });
    expect(d.status).toMatchObject({
      state: 'completed',
      completed: 3,
      progress: '3/3',
      startTime: T0,
      completionTime: T1,
    });
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'True', reason: 'Completed' });
    expect(condition(d.status, 'Progressing')).toMatchObject({ status: 'False', reason: 'Completed' });
    expect(condition(d.status, 'Degraded')).toMatchObject({ status: 'False' });
  });

  it('completed also when items were skipped by the worker without a cancellation', () => {
    const d = decide({
      job: running([result(0, 'success'), result(1, 'skipped', { message: 'duplicate' }), result(2, 'success')]),
      workload: workload({ complete: true }),
      now: T1,
    });
    expect(d.status).toMatchObject({ state: 'completed', completed: 2, skipped: 1 });
  });

  it('completed_with_errors: some failed, at least one succeeded', () => {
    const d = decide({
      job: running([result(0, 'success'), result(1, 'error', { message: 'bad' }), result(2, 'success')]),
      workload: workload({ complete: true }),
      now: T1,
    });
    expect(d.status).toMatchObject({ state: 'completed_with_errors', completed: 2, failed: 1 });
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'True', reason: 'CompletedWithErrors' });
    expect(condition(d.status, 'Degraded')).toMatchObject({ status: 'True', reason: 'ItemsFailed' });
  });

  it('failed: no item succeeded', () => {
    const d = decide({
      job: running([0, 1, 2].map((i) => result(i, 'error'))),
      workload: workload({ complete: true }),
      now: T1,
    });
    expect(d.status).toMatchObject({ state: 'failed', failed: 3, completionTime: T1 });
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'False', reason: 'Failed' });
  });

  it('workers failed with retries exhausted: items without a result fail with a clear message', () => {
    const failure = { reason: 'BackoffLimitExceeded', message: 'the worker failed 4 times (backoffLimit 3)' };
    const d = decide({
      job: running([result(0, 'success')]),
      workload: workload({ failure, failed: 4 }),
      now: T1,
    });
    expect(d.status).toMatchObject({ state: 'completed_with_errors', completed: 1, failed: 2, progress: '3/3' });
    expect(d.status.items?.[1]).toEqual({
      index: 1,
      identifier: 'item-1.mp4',
      videoId: 'video-1',
      status: 'error',
      message: `not processed: the job's workers failed and were not retried again (BackoffLimitExceeded): ${failure.message}`,
    });
    const none = decide({ job: running([]), workload: workload({ failure }), now: T1 });
    expect(none.status).toMatchObject({ state: 'failed', failed: 3 });
    expect(condition(none.status, 'Ready')).toMatchObject({ status: 'False', reason: 'WorkerFailed' });
    expect(condition(none.status, 'Ready')?.message).toContain(failure.message);
  });

  it('workers finished without results for some items: those fail', () => {
    const d = decide({
      job: running([result(0, 'success')]),
      workload: workload({ complete: true }),
      now: T1,
    });
    expect(d.status).toMatchObject({ state: 'completed_with_errors', failed: 2 });
    expect(d.status.items?.[2].message).toMatch(/without a result/);
  });

  it('cuts item messages it writes to ITEM_MESSAGE_MAX', () => {
    const failure = { reason: 'BackoffLimitExceeded', message: 'x'.repeat(2000) };
    const d = decide({ job: running([]), workload: workload({ failure }), now: T1 });
    expect(d.status.items?.every((i) => (i.message ?? '').length === ITEM_MESSAGE_MAX)).toBe(true);
  });

  it('a terminal job is left as it is, whatever happens to its spec or workload', () => {
    const done = job({ cancel: true, status: { state: 'completed', completionTime: T0 } });
    const d = decide({ job: done, workload: workload({ failure: { reason: 'X', message: 'y' } }), now: T1 });
    expect(d).toEqual({ status: done.status, ensureWorkload: false, removeWorkload: false });
  });
});

describe('decideIngestJob: cancellation', () => {
  it('a pending job without a workload: every item skipped, cancelled', () => {
    const d = decide({ job: job({ cancel: true }), workload: undefined, now: T1 });
    expect(d).toMatchObject({ ensureWorkload: false, removeWorkload: false });
    expect(d.status).toMatchObject({
      state: 'cancelled',
      skipped: 3,
      completed: 0,
      progress: '3/3',
      completionTime: T1,
    });
    expect(d.status.items?.every((i) => i.status === 'skipped' && i.message === SKIPPED_BY_CANCEL)).toBe(true);
    expect(d.status.startTime).toBeUndefined();
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'False', reason: 'Cancelled' });
  });

  it('a pending job whose workload has not started: cancelled, and the workload is removed', () => {
    const d = decide({ job: job({ cancel: true }), workload: workload(), now: T1 });
    expect(d).toMatchObject({ ensureWorkload: false, removeWorkload: true });
    expect(d.status.state).toBe('cancelled');
  });

  it('a running job waits for its workers to stop before their next item', () => {
    const j = job({ cancel: true, status: { state: 'running', items: [result(0, 'success')] } });
    const d = decide({ job: j, workload: workload({ active: 1, ready: 1, startTime: T0 }), now: T1 });
    expect(d).toMatchObject({ ensureWorkload: false, removeWorkload: false });
    expect(d.status.state).toBe('running');
    expect(condition(d.status, 'Progressing')).toMatchObject({ status: 'True', reason: 'Cancelling' });
  });

  it('once the workers stopped, unstarted items are skipped and the job is cancelled', () => {
    const j = job({ cancel: true, status: { state: 'running', startTime: T0, items: [result(0, 'success')] } });
    const d = decide({ job: j, workload: workload({ complete: true, succeeded: 1, startTime: T0 }), now: T1 });
    expect(d.status).toMatchObject({ state: 'cancelled', completed: 1, skipped: 2, progress: '3/3', startTime: T0 });
    expect(d.removeWorkload).toBe(false);
  });

  it('a cancelled running job whose process restarted (no workload): cancelled at once', () => {
    const j = job({ cancel: true, status: { state: 'running', startTime: T0, items: [result(0, 'error')] } });
    const d = decide({ job: j, workload: undefined, now: T1 });
    expect(d.status).toMatchObject({ state: 'cancelled', failed: 1, skipped: 2 });
    expect(condition(d.status, 'Degraded')).toMatchObject({ status: 'True', reason: 'ItemsFailed' });
  });

  it('a cancellation that came after the last item skips nothing: the job completes', () => {
    const j = job({ cancel: true, status: { state: 'running', items: [0, 1, 2].map((i) => result(i, 'success')) } });
    const d = decide({ job: j, workload: workload({ active: 1, ready: 1 }), now: T1 });
    expect(d.status.state).toBe('completed');
  });

  it('workers that failed on a cancelled job leave its items skipped, not failed', () => {
    const j = job({ cancel: true, status: { state: 'running', items: [result(0, 'success')] } });
    const failure = { reason: 'BackoffLimitExceeded', message: 'gone' };
    const d = decide({ job: j, workload: workload({ failure }), now: T1 });
    expect(d.status).toMatchObject({ state: 'cancelled', skipped: 2, failed: 0 });
  });
});
