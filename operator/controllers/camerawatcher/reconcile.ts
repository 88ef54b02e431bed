import {
  CAMERA_WATCHER_WORKER,
  type CameraWatcher,
  type CameraWatcherPhase,
  type CameraWatcherStatus,
} from '../../api/index.js';
import type { LongRunningWorkloadSpec, WorkloadStatus } from '../../ports/index.js';
import { clipStatusMessage, setConditions, workerDegraded, type DesiredCondition } from '../conditions.js';

/** The workload of an enabled CameraWatcher: one long-running camera-watcher worker. */
export const CAMERA_WATCHER_WORKLOAD: LongRunningWorkloadSpec = {
  mode: 'long-running',
  worker: CAMERA_WATCHER_WORKER,
  replicas: 1,
};

/** What the controller does about one watcher. */
export interface CameraWatcherDecision {
  /** The status to write: the worker's own fields (lastEventId, lastEventStart, eventsHandled, …) as they were. */
  status: CameraWatcherStatus;
  /** Make the workload (enabled, none yet). */
  ensureWorkload: boolean;
  /** Remove the workload (disabled, or its Deployment gave up). */
  removeWorkload: boolean;
}

/**
 * The watcher's phase and conditions from its spec and its workload, a pure function:
 * - disabled: `Stopped`, the workload removed; Ready=False/Disabled.
 * - enabled, no worker runs yet: `Pending`; Ready=False and Progressing=True with the wait's reason (`Starting`, or
 *   why: Unschedulable, ImagePullBackOff, FailedCreate, CreateContainerConfigError, WorkerNotRegistered, …); a worker
 *   that ended and waits to restart is Degraded=True/WorkerRestarting with its last error.
 * - enabled, the worker runs: `Watching`; Ready=True/Watching, Progressing=False/Watching.
 * - enabled, the Deployment exceeded its progress deadline: `Failed`; Degraded=True/ProgressDeadlineExceeded (the
 *   workload is kept: it starts when the cluster lets it, and the phase follows).
 * Only phase, message, conditions and observedGeneration are the controller's; everything else in the status is the
 * worker's and is returned as it was.
 */
export function decideCameraWatcher(input: {
  watcher: CameraWatcher;
  workload: WorkloadStatus | undefined;
  now: string;
}): CameraWatcherDecision {
  const { watcher, workload, now } = input;
  const before = watcher.status ?? {};
  const generation = watcher.metadata.generation;
  let phase: CameraWatcherPhase;
  let message: string;
  let desired: DesiredCondition[];
  if (!watcher.spec.enabled) {
    phase = 'Stopped';
    message = 'the watcher is disabled';
    desired = [
      { type: 'Ready', status: 'False', reason: 'Disabled', message },
      { type: 'Progressing', status: 'False', reason: 'Disabled', message },
      { type: 'Degraded', status: 'False', reason: 'Disabled', message },
    ];
  } else if (workload && workload.ready > 0) {
    phase = 'Watching';
    message = `watching camera ${watcher.spec.camera}`;
    desired = [
      { type: 'Ready', status: 'True', reason: 'Watching', message },
      { type: 'Progressing', status: 'False', reason: 'Watching', message },
      { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'the worker runs' },
    ];
  } else {
    const waiting = workload?.waiting;
    const reason = waiting?.reason ?? 'Starting';
    message = clipStatusMessage(waiting?.message ?? 'the camera-watcher worker is starting');
    phase = reason === 'ProgressDeadlineExceeded' ? 'Failed' : 'Pending';
    desired = [
      { type: 'Ready', status: 'False', reason, message },
      { type: 'Progressing', status: phase === 'Failed' ? 'False' : 'True', reason, message },
      phase === 'Failed' ? { type: 'Degraded', status: 'True', reason, message } : workerDegraded(workload),
    ];
  }
  const status: CameraWatcherStatus = {
    ...before,
    phase,
    message,
    conditions: setConditions(before.conditions, desired, now, generation),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  return {
    status,
    ensureWorkload: watcher.spec.enabled && !workload,
    removeWorkload: !watcher.spec.enabled && workload !== undefined,
  };
}
