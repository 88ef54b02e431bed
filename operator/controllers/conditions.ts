import type { Condition } from '../api/index.js';
import type { WorkloadStatus } from '../ports/index.js';

/** The CRDs' bound on a condition's or a phase's message (meta.ts, camerawatcher.ts, captionrun.ts). */
const STATUS_MESSAGE_MAX = 1024;

/** `text` cut to fit a status message, marked with an ellipsis where it was cut. */
export function clipStatusMessage(text: string): string {
  return text.length > STATUS_MESSAGE_MAX ? `${text.slice(0, STATUS_MESSAGE_MAX - 1)}…` : text;
}

/** A condition as a controller decides it; the time and generation are filled in by `setConditions`. */
export interface DesiredCondition {
  type: string;
  status: Condition['status'];
  reason: string;
  message: string;
}

/**
 * The condition list after applying `desired`: `lastTransitionTime` is `now` for a condition whose status changed
 * (or that is new) and kept otherwise; conditions not named in `desired` are kept as they are.
 */
export function setConditions(
  current: Condition[] | undefined,
  desired: DesiredCondition[],
  now: string,
  observedGeneration: number | undefined,
): Condition[] {
  const byType = new Map((current ?? []).map((c) => [c.type, c]));
  for (const want of desired) {
    const before = byType.get(want.type);
    const lastTransitionTime = before && before.status === want.status ? before.lastTransitionTime : now;
    byType.set(want.type, {
      ...want,
      lastTransitionTime,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    });
  }
  return [...byType.values()];
}

/**
 * Degraded for a long-running worker that is not running: True/WorkerRestarting with its restarts and last error when
 * it ended and waits to restart, else False/AsExpected.
 */
export function workerDegraded(workload: WorkloadStatus | undefined): DesiredCondition {
  return (workload?.restarts ?? 0) > 0 && workload?.lastError !== undefined
    ? {
        type: 'Degraded',
        status: 'True',
        reason: 'WorkerRestarting',
        message: clipStatusMessage(`the worker ended ${workload.restarts} times; last: ${workload.lastError}`),
      }
    : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'nothing failed' };
}
