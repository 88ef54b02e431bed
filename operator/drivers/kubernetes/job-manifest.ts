import { createHash } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import type { AnyResource } from '../../api/index.js';
import type { WorkloadSpec } from '../../ports/index.js';

/** How worker pods are placed and started: operator configuration (`ARGUS_WORKER_*`). */
export interface WorkerPodTemplate {
  image: string;
  /** The argus command in the image; `worker <name> --job <ns>/<name> --completions <n>` is appended. */
  command: string[];
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  nodeSelector: Record<string, string>;
  tolerations: Array<Record<string, string | number>>;
  resources: { limits?: Record<string, string>; requests?: Record<string, string> };
  serviceAccountName?: string;
  /** ConfigMaps and Secrets whose keys become the worker's environment (its service configuration). */
  envFrom: Array<{ configMapRef: { name: string } } | { secretRef: { name: string } }>;
  /** Finished Jobs (and their pods) are removed this long after they finish. */
  ttlSecondsAfterFinished: number;
}

/** Most shards a workload may have: the Job name leaves room for a 4-digit `-<index>` pod hostname suffix. */
export const MAX_COMPLETIONS = 10_000;
const MAX_JOB_NAME = 63 - 1 - String(MAX_COMPLETIONS - 1).length;
const LABEL_MAX = 63;
/** `app.kubernetes.io/managed-by` of every Job the operator makes (the driver watches Jobs by it). */
export const MANAGED_BY = 'argus-operator';

/** A DNS-1123 label of at most `max` characters: short names as they are, long ones cut and given a hash suffix. */
function boundedLabel(value: string, max: number): string {
  const clean = value.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  if (clean.length <= max && clean === value) return clean;
  const hash = createHash('sha256').update(value).digest('hex').slice(0, 8);
  const head = clean.slice(0, max - hash.length - 1).replace(/-+$/, '');
  return `${head}-${hash}`;
}

/**
 * The Job's name for a resource: `<kind>-<name>`, cut with a hash so that Indexed pods' hostnames
 * `<job>-<index>` fit 63 characters, and without dots (a hostname is a DNS label).
 */
export function jobName(owner: AnyResource): string {
  return boundedLabel(`${owner.kind.toLowerCase()}-${owner.metadata.name}`, MAX_JOB_NAME);
}

/** Labels on the Job and its pods: selectable by owner kind and name. */
export function jobLabels(owner: AnyResource, worker: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'argus',
    'app.kubernetes.io/component': `${worker}-worker`,
    'app.kubernetes.io/managed-by': MANAGED_BY,
    'argus.dev/kind': owner.kind,
    'argus.dev/name': boundedLabel(owner.metadata.name, LABEL_MAX),
  };
}

/** uid and gid of worker processes (the image's unprivileged user, as the chart's pods use). */
export const WORKER_UID = 10001;

/**
 * Writable places of a worker on its read-only root filesystem (emptyDir volumes): /tmp (temporary files, HOME for
 * tools that write under it), the data directory (dataprep's temporary media, local state) and the models directory
 * (the models imported at start).
 */
const WRITABLE_DIRS = [
  { name: 'tmp', mountPath: '/tmp' },
  { name: 'data', mountPath: '/var/lib/argus/data' },
  { name: 'models', mountPath: '/var/lib/argus/models' },
];

/**
 * The indexed batch/v1 Job running a resource's workload: owned by the resource (controller, blocking deletion,
 * same namespace) so that deleting the resource collects it; each pod runs `argus worker <name>` on its share
 * (index from JOB_COMPLETION_INDEX, which the Job controller sets in Indexed mode).
 */
export function buildJob(owner: AnyResource, spec: WorkloadSpec, pod: WorkerPodTemplate): V1Job {
  const { name, namespace, uid } = owner.metadata;
  if (!uid) throw new Error(`${owner.kind} ${namespace}/${name} has no uid: read it from the API server first`);
  if (!(spec.completions >= 1 && spec.completions <= MAX_COMPLETIONS)) {
    throw new Error(`completions must be 1..${MAX_COMPLETIONS}, not ${spec.completions}`);
  }
  const labels = jobLabels(owner, spec.worker);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(owner),
      namespace,
      labels,
      ownerReferences: [
        { apiVersion: owner.apiVersion, kind: owner.kind, name, uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      completionMode: 'Indexed',
      completions: spec.completions,
      parallelism: Math.min(spec.parallelism, spec.completions),
      backoffLimit: spec.backoffLimit,
      ttlSecondsAfterFinished: pod.ttlSecondsAfterFinished,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          // PodSecurity "restricted": non-root with numeric ids, RuntimeDefault seccomp (see the container's part).
          securityContext: {
            runAsNonRoot: true,
            runAsUser: WORKER_UID,
            runAsGroup: WORKER_UID,
            fsGroup: WORKER_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          volumes: WRITABLE_DIRS.map(({ name }) => ({ name, emptyDir: {} })),
          ...(pod.serviceAccountName ? { serviceAccountName: pod.serviceAccountName } : {}),
          ...(Object.keys(pod.nodeSelector).length ? { nodeSelector: pod.nodeSelector } : {}),
          ...(pod.tolerations.length ? { tolerations: pod.tolerations } : {}),
          containers: [
            {
              name: 'worker',
              image: pod.image,
              ...(pod.imagePullPolicy ? { imagePullPolicy: pod.imagePullPolicy } : {}),
              command: [
                ...pod.command,
                'worker',
                spec.worker,
                '--job',
                `${namespace}/${name}`,
                '--completions',
                String(spec.completions),
              ],
              ...(Object.keys(pod.resources).length ? { resources: pod.resources } : {}),
              ...(pod.envFrom.length ? { envFrom: pod.envFrom } : {}),
              env: [
                { name: 'ARGUS_DATA_DIR', value: '/var/lib/argus/data' },
                { name: 'ARGUS_MODELS_DIR', value: '/var/lib/argus/models' },
                { name: 'HOME', value: '/tmp' },
              ],
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: WRITABLE_DIRS,
            },
          ],
        },
      },
    },
  };
}
