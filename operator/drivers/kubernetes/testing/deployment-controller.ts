/**
 * kube-controller-manager's Deployment and ReplicaSet controllers as the fake API server runs them, for what the
 * operator's long-running workloads read: a Deployment gets one ReplicaSet per pod template
 * (`<deployment>-<pod-template-hash>`, owned by it; `Recreate` scales older ones to 0), whose pods
 * (`<replicaset>-xxxxx`, owned by the ReplicaSet, labelled with the hash) are created through admission; a refused
 * pod becomes the ReplicaSet's `ReplicaFailure=True/FailedCreate` condition, which the Deployment copies. The
 * Deployment's status as the real controller writes it: `observedGeneration`, `replicas`, `updatedReplicas`,
 * `readyReplicas`, `availableReplicas` (minReadySeconds 0: Ready pods), `unavailableReplicas`, and conditions
 * `Available` (MinimumReplicasAvailable / MinimumReplicasUnavailable) and `Progressing` (NewReplicaSetCreated,
 * ReplicaSetUpdated, NewReplicaSetAvailable, and ProgressDeadlineExceeded once the test says the deadline passed).
 * Not modelled: RollingUpdate surge, minReadySeconds, paused Deployments, pod deletion costs, revision history.
 */
import { createHash } from 'node:crypto';

/** The label every ReplicaSet and pod of a Deployment carries (the hash of its pod template). */
export const POD_TEMPLATE_HASH = 'pod-template-hash';

/** What the two controllers read and write, served by the fake (through the same paths and admission as clients). */
export interface DeploymentControllerCluster {
  /** The ReplicaSets whose controller is this Deployment. */
  replicaSetsOf(deployment: any): any[];
  /** The pods whose controller is this ReplicaSet. */
  podsOf(replicaSet: any): any[];
  /** Creates or replaces a ReplicaSet (its spec): the stored object. */
  putReplicaSet(replicaSet: any): any;
  /** Creates a pod through admission: the stored pod, or the API's refusal message. */
  createPod(namespace: string, pod: any): { pod: any } | { refused: string };
  deletePod(pod: any): void;
  writeReplicaSetStatus(replicaSet: any, status: any): void;
  writeDeploymentStatus(deployment: any, status: any): void;
  /** The test said this Deployment's progress deadline has passed. */
  deadlinePassed(deployment: any): boolean;
}

function active(pod: any): boolean {
  return !pod.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(pod.status?.phase);
}

function ready(pod: any): boolean {
  return (pod.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
}

/** The short hash of a pod template (the real one is FNV-32a of the template, rendered as a safe string). */
function templateHash(template: any): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const digest = createHash('sha256').update(JSON.stringify(template)).digest();
  return Array.from(digest.subarray(0, 10), (b) => alphabet[b % alphabet.length]).join('');
}

/** A condition with `lastTransitionTime` kept while its status stays (and `lastUpdateTime` moved when anything does). */
function setCondition(conditions: any[], next: any, now: string): any[] {
  const before = conditions.find((c) => c.type === next.type);
  const same =
    before && before.status === next.status && before.reason === next.reason && before.message === next.message;
  const condition = same
    ? before
    : {
        ...next,
        lastUpdateTime: now,
        lastTransitionTime: before && before.status === next.status ? before.lastTransitionTime : now,
      };
  // In place: the list keeps its order, so an unchanged status is the same status.
  return before ? conditions.map((c) => (c === before ? condition : c)) : [...conditions, condition];
}

/** The ReplicaSet controller's sync: create or delete pods towards `replicas`; a refusal is ReplicaFailure. */
function syncReplicaSet(cluster: DeploymentControllerCluster, replicaSet: any, now: string): void {
  const pods = cluster.podsOf(replicaSet).filter(active);
  const want: number = replicaSet.spec.replicas ?? 1;
  let refused: string | undefined;
  for (let i = pods.length; i < want; i++) {
    const template = structuredClone(replicaSet.spec.template);
    const created = cluster.createPod(replicaSet.metadata.namespace, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        ...template.metadata,
        generateName: `${replicaSet.metadata.name}-`,
        namespace: replicaSet.metadata.namespace,
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: replicaSet.metadata.name,
            uid: replicaSet.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: template.spec,
    });
    if ('refused' in created) {
      refused = created.refused;
      break;
    }
    pods.push(created.pod);
  }
  for (const pod of pods.slice(want)) cluster.deletePod(pod);
  const live = pods.slice(0, want);
  let conditions: any[] = (replicaSet.status?.conditions ?? []).filter((c: any) => c.type !== 'ReplicaFailure');
  // A refusal repeats with each retry (a new generated pod name each time): the condition keeps the first one's
  // words until the refusals stop, so that a retry without change settles.
  const failing = (replicaSet.status?.conditions ?? []).find((c: any) => c.type === 'ReplicaFailure');
  if (refused && failing) conditions = replicaSet.status.conditions;
  else if (refused) {
    conditions = setCondition(
      replicaSet.status?.conditions ?? [],
      { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: refused },
      now,
    );
  }
  cluster.writeReplicaSetStatus(replicaSet, {
    replicas: live.length,
    readyReplicas: live.filter(ready).length,
    availableReplicas: live.filter(ready).length,
    observedGeneration: replicaSet.metadata.generation,
    ...(conditions.length ? { conditions } : {}),
  });
}

/** One sync of one Deployment and its ReplicaSets, as the Deployment controller's `Recreate` rollout does it. */
export function syncDeployment(cluster: DeploymentControllerCluster, deployment: any, now: string): void {
  const { namespace, name } = deployment.metadata;
  const hash = templateHash(deployment.spec.template);
  const replicas: number = deployment.spec.replicas ?? 1;
  const owned = cluster.replicaSetsOf(deployment);
  const old = owned.filter((rs) => rs.metadata.labels?.[POD_TEMPLATE_HASH] !== hash);
  let current = owned.find((rs) => rs.metadata.labels?.[POD_TEMPLATE_HASH] === hash);
  let progressing: any;
  // Recreate: the old pods go before the new ReplicaSet gets any.
  for (const rs of old) {
    const scaled = rs.spec.replicas === 0 ? rs : cluster.putReplicaSet({ ...rs, spec: { ...rs.spec, replicas: 0 } });
    syncReplicaSet(cluster, scaled, now);
  }
  const oldRunning = old.some((rs) => cluster.podsOf(rs).some(active));
  if (!current) {
    const labels = { ...deployment.spec.template.metadata?.labels, [POD_TEMPLATE_HASH]: hash };
    current = cluster.putReplicaSet({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${name}-${hash}`,
        namespace,
        labels,
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name,
            uid: deployment.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        replicas: oldRunning ? 0 : replicas,
        selector: { matchLabels: { ...deployment.spec.selector.matchLabels, [POD_TEMPLATE_HASH]: hash } },
        template: { ...deployment.spec.template, metadata: { ...deployment.spec.template.metadata, labels } },
      },
    });
    progressing = {
      status: 'True',
      reason: 'NewReplicaSetCreated',
      message: `Created new replica set "${name}-${hash}"`,
    };
  }
  if (!oldRunning && current.spec.replicas !== replicas) {
    current = cluster.putReplicaSet({ ...current, spec: { ...current.spec, replicas } });
  }
  syncReplicaSet(cluster, current, now);
  const pods = cluster
    .replicaSetsOf(deployment)
    .flatMap((rs) => cluster.podsOf(rs))
    .filter(active);
  const updated = cluster.podsOf(current).filter(active);
  const readyCount = pods.filter(ready).length;
  const status = structuredClone(deployment.status ?? {});
  let conditions: any[] = status.conditions ?? [];
  const available = readyCount >= replicas;
  conditions = setCondition(
    conditions,
    available
      ? {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
        }
      : {
          type: 'Available',
          status: 'False',
          reason: 'MinimumReplicasUnavailable',
          message: 'Deployment does not have minimum availability.',
        },
    now,
  );
  const rsName = current.metadata.name;
  const complete = updated.length === replicas && readyCount === replicas && pods.length === replicas;
  if (complete) {
    progressing = {
      status: 'True',
      reason: 'NewReplicaSetAvailable',
      message: `ReplicaSet "${rsName}" has successfully progressed.`,
    };
  } else if (cluster.deadlinePassed(deployment)) {
    progressing = {
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: `ReplicaSet "${rsName}" has timed out progressing.`,
    };
  } else if (!progressing && !conditions.some((c) => c.type === 'Progressing' && c.status === 'True')) {
    progressing = { status: 'True', reason: 'ReplicaSetUpdated', message: `ReplicaSet "${rsName}" is progressing.` };
  }
  if (progressing) conditions = setCondition(conditions, { type: 'Progressing', ...progressing }, now);
  // The ReplicaSet's ReplicaFailure (FailedCreate) shows on the Deployment while it lasts.
  const replicaSet = cluster.replicaSetsOf(deployment).find((rs) => rs.metadata.name === rsName);
  const failure = (replicaSet?.status?.conditions ?? []).find((c: any) => c.type === 'ReplicaFailure');
  conditions = conditions.filter((c) => c.type !== 'ReplicaFailure');
  if (failure) {
    const { type, status: failed, reason, message } = failure;
    const kept = setCondition(status.conditions ?? [], { type, status: failed, reason, message }, now);
    conditions.push(kept.find((c) => c.type === 'ReplicaFailure'));
  }
  const next = {
    observedGeneration: deployment.metadata.generation,
    replicas: pods.length,
    updatedReplicas: updated.length,
    readyReplicas: readyCount,
    availableReplicas: readyCount,
    unavailableReplicas: Math.max(0, replicas - readyCount),
    conditions,
  };
  cluster.writeDeploymentStatus(deployment, next);
}
