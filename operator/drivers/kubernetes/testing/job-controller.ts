/**
 * kube-controller-manager's Job controller (pkg/controller/job, Kubernetes ≥ 1.31) as the fake API server runs it:
 * what it writes to a batch/v1 Job's status and when, so that tests see what a real cluster shows. Modelled: startTime
 * at the first sync of a Job that is not suspended (also when no pod can be created); Indexed pods `<job>-<i>-xxxxx`
 * with the tracking finalizer, created up to `parallelism` and refused by admission with a FailedCreate core/v1
 * Event on the Job; `active` counting Pending pods, `ready` the pods whose Ready condition is true; finished pods first
 * in `uncountedTerminatedPods`, then counted; FailureTarget (back-off limit) and SuccessCriteriaMet before Failed and
 * Complete; `suspend` deleting active pods with condition Suspended. Not modelled: the pod-failure back-off delay
 * between retries, pod failure policies, success policies, activeDeadlineSeconds.
 */

/** The tracking finalizer the Job controller puts on its pods so that none finishes uncounted. */
export const TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
/** The label and annotation of an Indexed Job's pod index. */
export const COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
/** The selector label the API server gives every Job (and its pod template). */
export const CONTROLLER_UID = 'batch.kubernetes.io/controller-uid';

/** What the Job controller reads and writes, served by the fake (as a real controller uses the API). */
export interface JobControllerCluster {
  /** The pods whose controller is this Job (by uid). */
  podsOf(job: any): any[];
  /** Creates a pod through admission: the stored pod, or the API's refusal message. */
  createPod(namespace: string, pod: any): { pod: any } | { refused: string };
  /** Deletes a pod; `uncounted` removes the tracking finalizer first (suspend), so it never counts as failed. */
  deletePod(pod: any, uncounted: boolean): void;
  /** Removes the tracking finalizer of a finished pod (a pod marked for deletion then goes). */
  releasePod(pod: any): void;
  /** Writes the Job's status subresource. */
  writeStatus(job: any, status: any): any;
  /** Records a core/v1 Event on the Job (the event correlator counts repeats). */
  event(job: any, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

const condition = (status: any, type: string) =>
  (status.conditions ?? []).find((c: any) => c.type === type && c.status === 'True');

function terminal(pod: any): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function active(pod: any): boolean {
  return !terminal(pod) && !pod.metadata.deletionTimestamp;
}

function ready(pod: any): boolean {
  return (pod.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
}

/** A pod that ended without success: Failed, or deleted before it succeeded (orphans never reach Failed). */
function failed(pod: any): boolean {
  return pod.status?.phase === 'Failed' || (!!pod.metadata.deletionTimestamp && pod.status?.phase !== 'Succeeded');
}

function indexOf(pod: any): number {
  return Number(pod.metadata.annotations?.[COMPLETION_INDEX]);
}

/** "0-2,5": the compressed form of `completedIndexes`. */
function formatIndexes(indexes: number[]): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    ranges.push(j - i >= 2 ? `${sorted[i]}-${sorted[j]}` : sorted.slice(i, j + 1).join(','));
    i = j + 1;
  }
  return ranges.join(',');
}

function parseIndexes(text: string | undefined): number[] {
  if (!text) return [];
  return text.split(',').flatMap((part) => {
    const [from, to] = part.split('-').map(Number);
    return to === undefined ? [from] : Array.from({ length: to - from + 1 }, (_, k) => from + k);
  });
}

function newCondition(type: string, reason: string, message: string, now: string) {
  return { type, status: 'True', reason, message, lastProbeTime: now, lastTransitionTime: now };
}

/** The pod the Job controller makes for `index`: generateName, labels, index, tracking finalizer, owner. */
function podFor(job: any, index: number): any {
  const template = structuredClone(job.spec.template);
  const name = job.metadata.name;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...template.metadata,
      generateName: `${name}-${index}-`,
      namespace: job.metadata.namespace,
      labels: { ...template.metadata?.labels, [COMPLETION_INDEX]: String(index) },
      annotations: { ...template.metadata?.annotations, [COMPLETION_INDEX]: String(index) },
      finalizers: [TRACKING_FINALIZER],
      ownerReferences: [
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          name,
          uid: job.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      ...template.spec,
      hostname: `${name}-${index}`,
      containers: template.spec.containers.map((c: any) => ({
        ...c,
        env: [
          ...(c.env ?? []),
          {
            name: 'JOB_COMPLETION_INDEX',
            valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${COMPLETION_INDEX}']` } },
          },
        ],
      })),
    },
    status: { phase: 'Pending' },
  };
}

/**
 * One sync of one Job, as syncJob does it: count pods, finish or suspend, create missing pods, write status. Returns
 * without writing when nothing changed.
 */
export function syncJob(cluster: JobControllerCluster, job: any, now: string): void {
  const status = structuredClone(job.status ?? {});
  if (condition(status, 'Complete') || condition(status, 'Failed')) return;
  const before = JSON.stringify(status);
  status.uncountedTerminatedPods ??= {};
  const suspended = job.spec.suspend === true;
  if (!status.startTime && !suspended) status.startTime = now;
  const spec = job.spec;
  const completions: number = spec.completions ?? 1;
  const pods = cluster.podsOf(job);

  // Finished pods: Indexed successes go straight to completedIndexes; failures pass through uncountedTerminatedPods.
  const tracked = pods.filter((p) => (p.metadata.finalizers ?? []).includes(TRACKING_FINALIZER));
  const newlySucceeded = tracked.filter((p) => p.status?.phase === 'Succeeded');
  const newlyFailed = tracked.filter(failed);
  const succeededIndexes = [...parseIndexes(status.completedIndexes), ...newlySucceeded.map(indexOf)];
  if (newlyFailed.length) {
    status.uncountedTerminatedPods = {
      ...status.uncountedTerminatedPods,
      failed: [...(status.uncountedTerminatedPods.failed ?? []), ...newlyFailed.map((p) => p.metadata.uid)],
    };
    cluster.writeStatus(job, status);
  }
  for (const pod of [...newlySucceeded, ...newlyFailed]) cluster.releasePod(pod);
  status.failed = (status.failed ?? 0) + newlyFailed.length;
  status.uncountedTerminatedPods = {};
  if (succeededIndexes.length) {
    status.completedIndexes = formatIndexes(succeededIndexes);
    status.succeeded = new Set(succeededIndexes).size;
  }

  let running = pods.filter(active).filter((p) => !newlyFailed.includes(p));
  let target = condition(status, 'FailureTarget') ?? condition(status, 'SuccessCriteriaMet');
  if (!target && status.failed > (spec.backoffLimit ?? 6)) {
    target = newCondition('FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', now);
    status.conditions = [...(status.conditions ?? []), target];
    // The interim condition is written before the pods are removed and long before Failed.
    cluster.writeStatus(job, status);
  }
  if (target?.type === 'FailureTarget') {
    // Remove the active pods; the Job is Failed once none is left (they count as failed on their way out).
    for (const pod of running) cluster.deletePod(pod, false);
    if (running.length === 0) {
      status.conditions = [...status.conditions, newCondition('Failed', target.reason, target.message, now)];
    }
    running = [];
  } else if (suspended) {
    for (const pod of running) cluster.deletePod(pod, true);
    running = [];
    if (!condition(status, 'Suspended')) {
      status.conditions = [
        ...(status.conditions ?? []).filter((c: any) => c.type !== 'Suspended'),
        newCondition('Suspended', 'JobSuspended', 'Job suspended', now),
      ];
      cluster.event(job, 'Normal', 'Suspended', 'Job suspended');
    }
  } else {
    running = [...running, ...createPods(cluster, job, running, new Set(succeededIndexes))];
    if (new Set(succeededIndexes).size >= completions && running.length === 0) {
      const met = condition(status, 'SuccessCriteriaMet');
      if (!met) {
        status.conditions = [
          ...(status.conditions ?? []),
          newCondition('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods', now),
        ];
        // The interim condition is written before the final one, as the real controller flushes it first.
        cluster.writeStatus(job, { ...status, active: 0, ready: 0 });
      }
      status.conditions = [
        ...status.conditions,
        newCondition('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods', now),
      ];
      status.completionTime = now;
    }
  }
  status.active = running.length;
  status.ready = running.filter(ready).length;
  if (JSON.stringify(status) !== before) cluster.writeStatus(job, status);
}

/** manageJob for an Indexed Job: pods for the indexes neither done nor running, up to parallelism. */
function createPods(cluster: JobControllerCluster, job: any, running: any[], done: Set<number>): any[] {
  const busy = new Set(running.map(indexOf));
  const room = (job.spec.parallelism ?? 1) - running.length;
  const wanted = Array.from({ length: job.spec.completions ?? 1 }, (_, i) => i)
    .filter((i) => !done.has(i) && !busy.has(i))
    .slice(0, Math.max(0, room));
  const created: any[] = [];
  for (const index of wanted) {
    const result = cluster.createPod(job.metadata.namespace, podFor(job, index));
    if ('refused' in result) {
      // The controller records the refusal on the Job and retries later with back-off; the status shows nothing.
      cluster.event(job, 'Warning', 'FailedCreate', `Error creating: ${result.refused}`);
      break;
    }
    created.push(result.pod);
  }
  return created;
}
