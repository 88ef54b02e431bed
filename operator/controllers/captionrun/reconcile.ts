import {
  CAPTION_RUN_WORKER,
  TERMINAL_CAPTION_RUN_PHASES,
  type CaptionRun,
  type CaptionRunPhase,
  type CaptionRunStatus,
} from '../../api/index.js';
import type { LongRunningWorkloadSpec, WorkloadStatus } from '../../ports/index.js';
import { clipStatusMessage, setConditions, workerDegraded, type DesiredCondition } from '../conditions.js';

/** The workload of a CaptionRun: one long-running caption worker. */
export const CAPTION_RUN_WORKLOAD: LongRunningWorkloadSpec = {
  mode: 'long-running',
  worker: CAPTION_RUN_WORKER,
  replicas: 1,
};

/** What the controller does about one run. */
export interface CaptionRunDecision {
  /** The status to write: the worker's own fields (counters, topic, lastError, startTime, …) as they were. */
  status: CaptionRunStatus;
  ensureWorkload: boolean;
  removeWorkload: boolean;
}

/** Whether a run has ended (Stopped or Failed): never left, kept for the retention, then deleted. */
export function isFinished(run: CaptionRun): boolean {
  const phase = run.status?.phase;
  return phase !== undefined && TERMINAL_CAPTION_RUN_PHASES.includes(phase);
}

/**
 * The run's phase and conditions from its spec, the phase its worker reports and its workload, a pure function:
 * - `Stopped` / `Failed` (the worker's, or the controller's below) are never left: the workload is removed, and
 *   `finishedTime` is set when the worker did not set it; a live phase written over it (a worker the kubelet restarted
 *   before its Deployment went) is put back to the ended one, as the Ready condition recorded it.
 * - `spec.stopRequested`: the workload is removed (the worker's signal fires; it writes Stopped itself) and the run is
 *   `Stopped` ("stopped on request").
 * - the workload's Deployment exceeded its progress deadline (no worker could start): `Failed`, workload removed.
 * - otherwise the workload is ensured; while no worker runs the phase is `Starting` (also a worker that reported
 *   Running or Reconnecting and ended: it restarts), with the wait's reason; once a worker runs, the phase is the
 *   worker's own (`Starting` until its first frame, `Running`, `Reconnecting` while the stream is away).
 * Conditions: Ready=True/Running only while a worker runs and reports Running; Progressing=True while starting or
 * reconnecting; Degraded=True/Reconnecting (stream lost), WorkerRestarting (the worker ended and restarts), Failed.
 * Only phase, message, finishedTime, conditions and observedGeneration are the controller's.
 */
export function decideCaptionRun(input: {
  run: CaptionRun;
  workload: WorkloadStatus | undefined;
  now: string;
}): CaptionRunDecision {
  const { run, workload, now } = input;
  const before = run.status ?? {};
  const generation = run.metadata.generation;
  const reported = before.phase;
  let phase: CaptionRunPhase;
  let message: string;
  let desired: DesiredCondition[];
  let remove = false;
  let ensure = false;
  // What the controller recorded when the run ended (its Ready condition), should a worker that was restarted before
  // its workload went write a live phase over it.
  const ended = before.conditions?.find((c) => c.type === 'Ready' && (c.reason === 'Stopped' || c.reason === 'Failed'));
  if (reported && TERMINAL_CAPTION_RUN_PHASES.includes(reported)) {
    phase = reported;
    message = before.message ?? (phase === 'Stopped' ? 'stopped' : 'failed');
    remove = workload !== undefined;
  } else if (ended && before.finishedTime !== undefined) {
    phase = ended.reason as 'Stopped' | 'Failed';
    message = ended.message;
    remove = workload !== undefined;
  } else if (run.spec.stopRequested) {
    phase = 'Stopped';
    message = 'stopped on request';
    remove = workload !== undefined;
  } else if (workload?.waiting?.reason === 'ProgressDeadlineExceeded') {
    phase = 'Failed';
    message = clipStatusMessage(`no caption worker could start: ${workload.waiting.message}`);
    remove = true;
  } else if (workload && workload.ready > 0) {
    phase = reported ?? 'Starting';
    message = before.message ?? 'the caption worker is starting';
  } else {
    ensure = !workload;
    phase = 'Starting';
    const waiting = workload?.waiting;
    message = clipStatusMessage(
      waiting
        ? `waiting for the caption worker (${waiting.reason}): ${waiting.message}`
        : 'the caption worker is starting',
    );
  }
  if (phase === 'Stopped' || phase === 'Failed') {
    const reason = phase;
    desired = [
      { type: 'Ready', status: 'False', reason, message },
      { type: 'Progressing', status: 'False', reason, message },
      phase === 'Failed'
        ? { type: 'Degraded', status: 'True', reason: 'Failed', message }
        : { type: 'Degraded', status: 'False', reason: 'Stopped', message },
    ];
  } else {
    const running = (workload?.ready ?? 0) > 0;
    const reason = running ? phase : (workload?.waiting?.reason ?? 'Starting');
    desired = [
      running && phase === 'Running'
        ? { type: 'Ready', status: 'True', reason: 'Running', message }
        : { type: 'Ready', status: 'False', reason, message },
      running && phase === 'Running'
        ? { type: 'Progressing', status: 'False', reason: 'Running', message }
        : { type: 'Progressing', status: 'True', reason, message },
      phase === 'Reconnecting'
        ? { type: 'Degraded', status: 'True', reason: 'Reconnecting', message }
        : workerDegraded(running ? undefined : workload),
    ];
  }
  const finished = phase === 'Stopped' || phase === 'Failed';
  const status: CaptionRunStatus = {
    ...before,
    phase,
    message,
    ...(finished ? { finishedTime: before.finishedTime ?? now } : {}),
    conditions: setConditions(before.conditions, desired, now, generation),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  return { status, ensureWorkload: ensure, removeWorkload: remove };
}
