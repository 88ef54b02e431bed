import { ITEM_MESSAGE_MAX, TERMINAL_INGEST_STATES } from '../../api/index.js';
import type { IngestItemResult, IngestJob, IngestJobStatus, IngestState } from '../../api/index.js';
import type { WorkloadStatus } from '../../ports/index.js';
import { setConditions, type DesiredCondition } from '../conditions.js';
import { counted } from '../../../services/lib/wording/index.js';

/** What the IngestJob controller sees: the job, its workload (undefined when there is none) and the time. */
export interface IngestJobObservation {
  job: IngestJob;
  workload: WorkloadStatus | undefined;
  /** RFC 3339, second precision. */
  now: string;
  /** How long a job may wait for its first worker unless its spec says (the operator's default). */
  pendingDeadlineSeconds: number;
}

/** What the controller should make true. */
export interface IngestJobDecision {
  /** The status the job should have (equal to the current one when nothing changed). */
  status: IngestJobStatus;
  /** Make the workload when there is none. */
  ensureWorkload: boolean;
  /** Stop and remove the workload (cancelled, or no worker started before the pending deadline). */
  removeWorkload: boolean;
  /** Decide again after this long even if nothing changes (the pending deadline; causes seen only by polling). */
  requeueAfterMs?: number;
}

/** While pending, how often to look again for why the workers wait (a refused pod shows only as an Event). */
export const PENDING_RECHECK_MS = 30_000;

/** Message of items a cancellation skipped. */
export const SKIPPED_BY_CANCEL = 'cancelled before the item was started';

/** Whether a job has reached a state it never leaves. */
export function isTerminal(job: IngestJob): boolean {
  return TERMINAL_INGEST_STATES.includes(job.status?.state as IngestState);
}

/**
 * The IngestJob state machine, as a pure function of the job (spec, status with the workers' item results) and its
 * workload. Everything but the item results is derived here; see operator/README.md for the transition table.
 */
export function decideIngestJob(observation: IngestJobObservation): IngestJobDecision {
  const { job, workload, now } = observation;
  const previous = job.status ?? {};
  if (isTerminal(job)) return { status: previous, ensureWorkload: false, removeWorkload: false };

  const total = job.spec.items.length;
  const cancel = job.spec.cancelRequested === true;
  const results = knownResults(job);
  const missing = job.spec.items.map((_, i) => i).filter((i) => !results.has(i));
  const generation = job.metadata.generation;

  const started = results.size > 0 || (workload?.ready ?? 0) > 0 || previous.state === 'running';
  const deadlineSeconds = job.spec.pendingDeadlineSeconds ?? observation.pendingDeadlineSeconds;
  const created = Date.parse(job.metadata.creationTimestamp ?? now);
  const pendingLeftMs = started || cancel ? undefined : created + deadlineSeconds * 1000 - Date.parse(now);
  const expired = pendingLeftMs !== undefined && pendingLeftMs <= 0 ? { seconds: deadlineSeconds } : undefined;

  const finish = finishing(missing.length, cancel, workload, expired);
  if (finish) {
    const final = new Map(results);
    for (const index of finish.fill ? missing : []) {
      final.set(index, {
        index,
        identifier: job.spec.items[index].identifier,
        ...(job.spec.items[index].videoId ? { videoId: job.spec.items[index].videoId } : {}),
        status: finish.fill!.status,
        message: finish.fill!.message.slice(0, ITEM_MESSAGE_MAX),
      });
    }
    const items = [...final.values()].sort((a, b) => a.index - b.index);
    const counts = countResults(items, total);
    const state = terminalState(counts, cancel);
    const startTime = previous.startTime ?? (started && !expired ? now : undefined);
    return {
      status: dropUndefined({
        ...previous,
        state,
        ...counts,
        items,
        conditions: setConditions(
          previous.conditions,
          terminalConditions(state, counts, workload, expired && waitingOf(workload)),
          now,
          generation,
        ),
        observedGeneration: generation,
        startTime,
        completionTime: now,
      }),
      ensureWorkload: false,
      removeWorkload:
        (cancel || expired !== undefined) && workload !== undefined && !workload.complete && !workload.failure,
    };
  }

  const items = [...results.values()].sort((a, b) => a.index - b.index);
  const counts = countResults(items, total);
  const state: IngestState = started ? 'running' : 'pending';
  // The first decision that sees a worker run: a Job's own startTime is its first sync, often before any pod runs.
  const startTime = previous.startTime ?? (started ? now : undefined);
  return {
    status: dropUndefined({
      ...previous,
      state,
      ...counts,
      items,
      conditions: setConditions(
        previous.conditions,
        activeConditions(state, counts, cancel, workload),
        now,
        generation,
      ),
      observedGeneration: generation,
      startTime,
    }),
    ensureWorkload: !cancel,
    removeWorkload: false,
    ...(pendingLeftMs !== undefined ? { requeueAfterMs: Math.min(PENDING_RECHECK_MS, pendingLeftMs) } : {}),
  };
}

/** Why the workers wait, as the workload says, or that they simply have not started. */
function waitingOf(workload: WorkloadStatus | undefined): { reason: string; message: string } {
  return workload?.waiting ?? { reason: 'Pending', message: 'no worker has started' };
}

interface Counts {
  total: number;
  completed: number;
  failed: number;
  skipped: number;
  progress: string;
}

/** What the items still without a result become once no worker will give them one. */
interface Fill {
  status: 'error' | 'skipped';
  message: string;
}

/** Whether the job finishes now (and how its missing items are filled in); undefined while work goes on. */
function finishing(
  missing: number,
  cancel: boolean,
  workload: WorkloadStatus | undefined,
  expired: { seconds: number } | undefined,
): { fill?: Fill } | undefined {
  if (missing === 0) return {};
  if (cancel) {
    // No worker runs now, so none will write another result: a Job's startTime or Pending pods do not count.
    const idle = !workload || workload.complete || workload.failure || workload.ready === 0;
    return idle ? { fill: { status: 'skipped', message: SKIPPED_BY_CANCEL } } : undefined;
  }
  if (expired) {
    const why = waitingOf(workload);
    const message = `not processed: no worker started within ${expired.seconds} s (${why.reason}): ${why.message}`;
    return { fill: { status: 'error', message } };
  }
  if (workload?.failure) {
    const message = `not processed: the job's workers failed and were not retried again (${workload.failure.reason}): ${workload.failure.message}`;
    return { fill: { status: 'error', message } };
  }
  if (workload?.complete) {
    return { fill: { status: 'error', message: 'not processed: the workers finished without a result for this item' } };
  }
  return undefined;
}

/** Results of items that exist in the spec, one per index (the last one written wins). */
function knownResults(job: IngestJob): Map<number, IngestItemResult> {
  const results = new Map<number, IngestItemResult>();
  for (const result of job.status?.items ?? []) {
    if (Number.isInteger(result.index) && result.index >= 0 && result.index < job.spec.items.length) {
      results.set(result.index, result);
    }
  }
  return results;
}

function countResults(items: IngestItemResult[], total: number): Counts {
  const completed = items.filter((i) => i.status === 'success').length;
  const failed = items.filter((i) => i.status === 'error').length;
  const skipped = items.filter((i) => i.status === 'skipped').length;
  return { total, completed, failed, skipped, progress: `${items.length}/${total}` };
}

function terminalState(counts: Counts, cancel: boolean): IngestState {
  if (cancel && counts.skipped > 0) return 'cancelled';
  if (counts.failed === 0) return 'completed';
  return counts.completed > 0 ? 'completed_with_errors' : 'failed';
}

function activeConditions(
  state: IngestState,
  counts: Counts,
  cancel: boolean,
  workload: WorkloadStatus | undefined,
): DesiredCondition[] {
  const progressing: DesiredCondition = cancel
    ? {
        type: 'Progressing',
        status: 'True',
        reason: 'Cancelling',
        message: 'cancellation requested: the workers stop before their next item',
      }
    : state === 'pending'
      ? workload?.waiting
        ? {
            type: 'Progressing',
            status: 'True',
            reason: workload.waiting.reason,
            message: `the workers cannot start yet: ${workload.waiting.message}`,
          }
        : { type: 'Progressing', status: 'True', reason: 'Pending', message: 'waiting for a worker to start' }
      : { type: 'Progressing', status: 'True', reason: 'Running', message: `${counts.progress} items done` };
  let degraded: DesiredCondition = {
    type: 'Degraded',
    status: 'False',
    reason: 'AsExpected',
    message: 'no item has failed',
  };
  if (counts.failed > 0) {
    degraded = {
      ...degraded,
      status: 'True',
      reason: 'ItemsFailed',
      message: `${counted(counts.failed, 'item')} failed so far`,
    };
  } else if ((workload?.failed ?? 0) > 0) {
    degraded = {
      ...degraded,
      status: 'True',
      reason: 'WorkerRestarted',
      message: `a worker failed ${workload?.failed} times and was started again`,
    };
  }
  return [
    {
      type: 'Ready',
      status: 'False',
      reason: state === 'pending' ? 'Pending' : 'Running',
      message: 'the job has not finished',
    },
    progressing,
    degraded,
  ];
}

function terminalConditions(
  state: IngestState,
  counts: Counts,
  workload: WorkloadStatus | undefined,
  expiredWaiting: { reason: string; message: string } | undefined,
): DesiredCondition[] {
  const summary = `${counts.completed} succeeded, ${counts.failed} failed, ${counts.skipped} skipped of ${counts.total}`;
  if (expiredWaiting) {
    // Ready and Progressing say the deadline passed; Degraded names what the workers waited for.
    const message = `${summary}: no worker started before the pending deadline (${expiredWaiting.reason}): ${expiredWaiting.message}`;
    return [
      { type: 'Ready', status: 'False', reason: 'PendingDeadlineExceeded', message },
      { type: 'Progressing', status: 'False', reason: 'PendingDeadlineExceeded', message },
      { type: 'Degraded', status: 'True', reason: expiredWaiting.reason, message },
    ];
  }
  const reason = {
    completed: 'Completed',
    completed_with_errors: 'CompletedWithErrors',
    failed: workload?.failure ? 'WorkerFailed' : 'Failed',
    cancelled: 'Cancelled',
  }[state as 'completed' | 'completed_with_errors' | 'failed' | 'cancelled'];
  const ready = state === 'completed' || state === 'completed_with_errors';
  const message = state === 'failed' && workload?.failure ? `${summary}: ${workload.failure.message}` : summary;
  return [
    { type: 'Ready', status: ready ? 'True' : 'False', reason, message },
    { type: 'Progressing', status: 'False', reason, message },
    counts.failed > 0
      ? { type: 'Degraded', status: 'True', reason: workload?.failure ? 'WorkerFailed' : 'ItemsFailed', message }
      : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'no item has failed' },
  ];
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
