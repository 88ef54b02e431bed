import { describe, expect, it } from '@jest/globals';
import type { CaptionRun } from '../../api/index.js';
import type { WorkloadStatus } from '../../ports/index.js';
import { decideCaptionRun } from './reconcile.js';

const NOW = '2026-05-01T10:00:00Z';

function run(status?: CaptionRun['status'], stopRequested = false): CaptionRun {
  return {
    apiVersion: 'argus.dev/v1alpha1',
    kind: 'CaptionRun',
    metadata: { name: 'front', namespace: 'default', uid: 'u1', generation: 1 },
    spec: {
      rtspUrl: 'rtsp://cam/1',
      prompt: 'Describe',
      modelName: 'offline',
      pipelineName: 'default',
      runName: 'front',
      maxTokens: 64,
      ...(stopRequested ? { stopRequested } : {}),
    },
    ...(status ? { status } : {}),
  };
}

const runningWorkload: WorkloadStatus = { active: 1, ready: 1, succeeded: 0, failed: 0, complete: false, restarts: 0 };

describe('decideCaptionRun', () => {
  it('keeps every field the worker writes, and decides the same status again (no write)', () => {
    const worker = {
      phase: 'Running' as const,
      message: 'captioning',
      framesProcessed: 5,
      mqttTopic: 'live-video-captioning/front',
    };
    const first = decideCaptionRun({ run: run(worker), workload: runningWorkload, now: NOW });
    expect(first.status).toMatchObject({ ...worker, observedGeneration: 1 });
    expect(first).toMatchObject({ ensureWorkload: false, removeWorkload: false });
    const again = decideCaptionRun({ run: run(first.status), workload: runningWorkload, now: '2026-05-01T11:00:00Z' });
    expect(again.status).toEqual(first.status);
  });

  it('a live phase written over an ended run (a restarted worker) is put back; the workload goes', () => {
    const failed = decideCaptionRun({
      run: run({ phase: 'Failed', message: 'no frame', finishedTime: NOW }),
      workload: runningWorkload,
      now: NOW,
    });
    expect(failed.removeWorkload).toBe(true);
    const overwritten = { ...failed.status, phase: 'Starting' as const, message: 'opening the stream' };
    const back = decideCaptionRun({ run: run(overwritten), workload: runningWorkload, now: NOW });
    expect(back.status).toMatchObject({ phase: 'Failed', message: 'no frame', finishedTime: NOW });
    expect(back).toMatchObject({ ensureWorkload: false, removeWorkload: true });
    const gone = decideCaptionRun({ run: run(overwritten), workload: undefined, now: NOW });
    expect(gone).toMatchObject({ ensureWorkload: false, removeWorkload: false });
  });

  it('a stop asked before any worker ran: Stopped at once, finishedTime now', () => {
    const decision = decideCaptionRun({ run: run(undefined, true), workload: undefined, now: NOW });
    expect(decision.status).toMatchObject({ phase: 'Stopped', message: 'stopped on request', finishedTime: NOW });
    expect(decision).toMatchObject({ ensureWorkload: false, removeWorkload: false });
  });
});
