import { TERMINAL_INGEST_STATES, type IngestJobStatus, type IngestState } from '../../api/index.js';
import type { BatchWorkloadSpec, ResourceEvent } from '../../ports/index.js';
import { counted } from '../../../services/lib/wording/index.js';

const terminal = (state: IngestState | undefined) => state !== undefined && TERMINAL_INGEST_STATES.includes(state);
const condition = (status: IngestJobStatus, type: string) => status.conditions?.find((c) => c.type === type);

/** The Event of a workload the controller just made (the Job in a cluster). */
export function workloadCreatedEvent(spec: BatchWorkloadSpec): ResourceEvent {
  return {
    type: 'Normal',
    reason: 'JobCreated',
    action: 'Create',
    note: `created the workload: ${counted(spec.completions, 'worker')} of "${spec.worker}", at most ${spec.parallelism} at once`,
  };
}

/**
 * The Events of one status transition, derived from the status before and after a write, so that a reconcile that
 * changes nothing records nothing: a worker started; the workers wait, and why (each new reason or message); the job
 * finished (completed, with errors, failed, cancelled).
 */
export function ingestJobEvents(before: IngestJobStatus, after: IngestJobStatus): ResourceEvent[] {
  const ready = condition(after, 'Ready');
  if (terminal(after.state) && !terminal(before.state) && ready) {
    const normal = after.state === 'completed' || after.state === 'cancelled';
    return [{ type: normal ? 'Normal' : 'Warning', reason: ready.reason, action: 'Finish', note: ready.message }];
  }
  if (after.state === 'running' && before.state !== 'running') {
    return [{ type: 'Normal', reason: 'Running', action: 'Start', note: 'a worker started' }];
  }
  const now = condition(after, 'Progressing');
  const then = condition(before, 'Progressing');
  const waiting = after.state === 'pending' && now && !['Pending', 'Cancelling'].includes(now.reason);
  if (waiting && (now.reason !== then?.reason || now.message !== then?.message)) {
    return [{ type: 'Warning', reason: now.reason, action: 'Wait', note: now.message }];
  }
  return [];
}
