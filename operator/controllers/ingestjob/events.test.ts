import { describe, expect, it } from '@jest/globals';
import type { IngestJobStatus } from '../../api/index.js';
import { ingestJobEvents } from './events.js';

const T = '2026-01-01T00:00:00Z';
const condition = (type: string, status: 'True' | 'False', reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: T,
});
const pending = (reason = 'Pending', message = 'waiting for a worker to start'): IngestJobStatus => ({
  state: 'pending',
  conditions: [
    condition('Ready', 'False', 'Pending', 'the job has not finished'),
    condition('Progressing', 'True', reason, message),
  ],
});
const finished = (state: IngestJobStatus['state'], ready: 'True' | 'False', reason: string): IngestJobStatus => ({
  state,
  conditions: [condition('Ready', ready, reason, '1 succeeded, 0 failed, 0 skipped of 1')],
});

describe('IngestJob Events: one per transition', () => {
  it('nothing for a status that did not change (a reconcile that changes nothing records nothing)', () => {
    for (const status of [pending(), pending('Unschedulable', 'no node'), { state: 'running' as const }]) {
      expect(ingestJobEvents(status, status)).toEqual([]);
    }
  });

  it('workers waiting: a Warning named by the reason, again only when the reason or its message changes', () => {
    expect(ingestJobEvents(pending(), pending('Unschedulable', 'no node'))).toEqual([
      { type: 'Warning', reason: 'Unschedulable', action: 'Wait', note: 'no node' },
    ]);
    expect(ingestJobEvents(pending('Unschedulable', 'no node'), pending('Unschedulable', 'no node'))).toEqual([]);
    expect(ingestJobEvents(pending('Unschedulable', 'no node'), pending('ErrImagePull', 'not found'))).toHaveLength(1);
    expect(ingestJobEvents(pending('Unschedulable', 'no node'), pending())).toEqual([]);
  });

  it('running, completed, failed, cancelled', () => {
    expect(ingestJobEvents(pending(), { state: 'running' })).toEqual([
      { type: 'Normal', reason: 'Running', action: 'Start', note: 'a worker started' },
    ]);
    expect(ingestJobEvents({ state: 'running' }, finished('completed', 'True', 'Completed'))).toEqual([
      { type: 'Normal', reason: 'Completed', action: 'Finish', note: '1 succeeded, 0 failed, 0 skipped of 1' },
    ]);
    expect(
      ingestJobEvents({ state: 'running' }, finished('completed_with_errors', 'True', 'CompletedWithErrors')),
    ).toMatchObject([{ type: 'Warning', reason: 'CompletedWithErrors' }]);
    expect(ingestJobEvents(pending(), finished('failed', 'False', 'PendingDeadlineExceeded'))).toMatchObject([
      { type: 'Warning', reason: 'PendingDeadlineExceeded' },
    ]);
    expect(ingestJobEvents(pending(), finished('cancelled', 'False', 'Cancelled'))).toMatchObject([
      { type: 'Normal', reason: 'Cancelled' },
    ]);
    const done = finished('completed', 'True', 'Completed');
    expect(ingestJobEvents(done, done)).toEqual([]);
  });
});
