import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';

/** Why no worker runs, as a WorkloadStatus says it. */
export interface Waiting {
  reason: string;
  message: string;
}

/** Container waiting reasons that keep a worker from ever starting without a change to the cluster or the image. */
const STUCK_CONTAINER_REASONS = [
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
];

/** Where the README explains how a namespace gets the worker's ServiceAccount, ConfigMap and RoleBinding. */
export const OPT_IN_HINT = 'opt this namespace in: worker.namespaces, see operator/README.md#namespaces';

/** A message that names a missing per-namespace object gets the opt-in hint; others stay the API's own words. */
function withHint(message: string): string {
  return /(serviceaccount|configmap|secret) "[^"]+" not found/.test(message) ? `${message} (${OPT_IN_HINT})` : message;
}

/** Whether a pod still counts as a worker to be (not finished, not being deleted). */
export function podActive(pod: V1Pod): boolean {
  return !pod.metadata?.deletionTimestamp && !['Succeeded', 'Failed'].includes(pod.status?.phase ?? '');
}

/**
 * What the Job's waiting pods wait for, from the scheduler's condition (PodScheduled=False, Unschedulable) and the
 * kubelet's container states (image pull, missing ConfigMap or Secret); undefined when nothing is stuck (pods that are
 * just being scheduled or pulled wait without a reason).
 */
export function whyPodsWait(pods: V1Pod[]): Waiting | undefined {
  for (const pod of pods.filter(podActive)) {
    const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
      return { reason: 'Unschedulable', message: scheduled.message ?? 'no node can run the worker pod' };
    }
    for (const container of pod.status?.containerStatuses ?? []) {
      const waiting = container.state?.waiting;
      if (waiting?.reason && STUCK_CONTAINER_REASONS.includes(waiting.reason)) {
        return { reason: waiting.reason, message: withHint(waiting.message ?? waiting.reason) };
      }
    }
  }
  return undefined;
}

/**
 * The generated part of a pod name (`<job>-<index>-` + five characters of the API server's name generator): each
 * retry of the Job controller names a new pod, so it is masked to keep one refusal one message.
 */
const GENERATED_POD_NAME = /(pods "[a-z0-9.-]+-)[bcdfghjklmnpqrstvwxz2456789]{5}"/g;

/**
 * The latest FailedCreate the Job controller recorded on the Job (admission refused its pods: PodSecurity, a missing
 * ServiceAccount, quota), in the API's own words (the generated pod name masked as `*`).
 */
export function lastFailedCreate(events: CoreV1Event[]): Waiting | undefined {
  const when = (e: CoreV1Event) => new Date(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? 0).getTime();
  const latest = events.filter((e) => e.reason === 'FailedCreate').sort((a, b) => when(b) - when(a))[0];
  if (!latest) return undefined;
  return failedCreate(latest.message ?? 'the Job could not create a pod');
}

/** A refused pod's message (a FailedCreate Event's, a ReplicaFailure condition's) as the controllers see it. */
export function failedCreate(message: string): Waiting {
  return { reason: 'FailedCreate', message: withHint(message.replace(GENERATED_POD_NAME, '$1*"')) };
}
