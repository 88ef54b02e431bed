import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { WorkloadStatus } from '../../ports/index.js';
import { failedCreate, podActive, whyPodsWait, type Waiting } from './workers-waiting.js';

/** Longest lastError kept from a container's termination. */
const LAST_ERROR_MAX = 1024;

function condition(deployment: V1Deployment, type: string) {
  return deployment.status?.conditions?.find((c) => c.type === type);
}

/** Why the last worker container ended, from the most recent `lastState.terminated` of the pods' containers. */
function lastTermination(pods: V1Pod[]): string | undefined {
  let latest: { at: number; text: string } | undefined;
  for (const pod of pods) {
    for (const container of pod.status?.containerStatuses ?? []) {
      const ended = container.lastState?.terminated;
      if (!ended) continue;
      const at = new Date(ended.finishedAt ?? 0).getTime();
      const text = `${ended.reason ?? 'Error'} (exit code ${ended.exitCode})${ended.message ? `: ${ended.message}` : ''}`;
      if (!latest || at >= latest.at) latest = { at, text };
    }
  }
  return latest?.text.slice(0, LAST_ERROR_MAX);
}

/**
 * A Deployment's status as the controllers see it: `active` the replicas that exist, `ready` the available ones (or
 * the pods whose worker container runs when the status lags), `restarts` the worker containers' restarts, `lastError` the last
 * termination; while none runs, `waiting` from the pods (unschedulable, image pull, CreateContainerConfigError), else
 * the Deployment's `ReplicaFailure` condition (FailedCreate: admission refused the pods, so none exists), else
 * `Progressing=False` (ProgressDeadlineExceeded). A status of an older generation than the spec counts no replica as
 * available.
 */
export function deploymentStatus(deployment: V1Deployment, pods: V1Pod[]): WorkloadStatus {
  const live = pods.filter(podActive);
  // A Running pod whose worker container runs (a crashed one waits in CrashLoopBackOff in a Running pod).
  const running = live.filter(
    (p) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).some((c) => c.state?.running),
  ).length;
  const current = (deployment.status?.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 0);
  const available = current ? (deployment.status?.availableReplicas ?? 0) : 0;
  const ready = Math.max(available, running);
  const restarts = pods
    .flatMap((p) => p.status?.containerStatuses ?? [])
    .reduce((sum, c) => sum + (c.restartCount ?? 0), 0);
  const lastError = lastTermination(pods);
  let waiting: Waiting | undefined;
  if (ready === 0) {
    waiting = whyPodsWait(live);
    const failure = condition(deployment, 'ReplicaFailure');
    if (!waiting && failure?.status === 'True') {
      waiting = failedCreate(failure.message ?? 'the ReplicaSet could not create a pod');
    }
    const progressing = condition(deployment, 'Progressing');
    if (!waiting && progressing?.status === 'False') {
      waiting = {
        reason: progressing.reason ?? 'ProgressDeadlineExceeded',
        message: progressing.message ?? 'the Deployment made no progress',
      };
    }
  }
  const created = deployment.metadata?.creationTimestamp;
  return {
    active: Math.max(deployment.status?.replicas ?? 0, live.length),
    ready,
    succeeded: 0,
    failed: 0,
    complete: false,
    restarts,
    ...(lastError ? { lastError } : {}),
    ...(waiting ? { waiting } : {}),
    ...(created ? { startTime: new Date(created).toISOString() } : {}),
  };
}
