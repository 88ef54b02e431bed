import { createHash } from 'node:crypto';
import type {
  V1Affinity,
  V1Deployment,
  V1EnvVar,
  V1Job,
  V1PodTemplateSpec,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type { AnyResource } from '../../api/index.js';
import type { BatchWorkloadSpec, LongRunningWorkloadSpec } from '../../ports/index.js';

/** How worker pods are placed and started: operator configuration (`ARGUS_WORKER_*`). */
export interface WorkerPodTemplate {
  image: string;
  /**
   * The argus command in the image; `worker <name> --job <ns>/<name> --completions <n>` is appended (a Job), or
   * `worker <name> --resource <ns>/<name>` (a Deployment). Empty: the image's entrypoint runs with those as args.
   */
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
  /** Variables of the worker container after the fixed ones, e.g. a key from a Secret (`valueFrom.secretKeyRef`). */
  env?: V1EnvVar[];
  /** Volumes besides the writable ones (`tmp`, `data`), e.g. the API keys Secret or a PVC of extra models. */
  volumes?: V1Volume[];
  volumeMounts?: V1VolumeMount[];
  affinity?: V1Affinity;
  /**
   * Per worker name (`ingest`, `camera-watcher`, `caption-run`): the placement, resources, ServiceAccount and
   * environment of that worker's pods instead of the defaults above (each field given replaces the default's).
   */
  overrides?: Record<string, WorkerPodOverride>;
}

/** What one worker's pods may set differently from the default worker pod template. */
export type WorkerPodOverride = Partial<
  Pick<
    WorkerPodTemplate,
    | 'image'
    | 'nodeSelector'
    | 'tolerations'
    | 'affinity'
    | 'resources'
    | 'serviceAccountName'
    | 'envFrom'
    | 'env'
    | 'volumes'
    | 'volumeMounts'
  >
>;

/** The pod template of `worker`: the defaults with that worker's overrides. */
export function podTemplateFor(pod: WorkerPodTemplate, worker: string): WorkerPodTemplate {
  return { ...pod, ...pod.overrides?.[worker] };
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
 * tools that write under it) and the data directory (dataprep's temporary media, local state). The models are the
 * image's own (its ARGUS_MODELS_DIR, imported at build time): no volume hides them.
 */
export const WRITABLE_DIRS = [
  { name: 'tmp', mountPath: '/tmp' },
  { name: 'data', mountPath: '/var/lib/argus/data' },
];

/**
 * Where a worker answers `GET /healthz` (`argus worker … --health-port`): the liveness probe restarts (a Deployment's)
 * or fails (a Job's, then retried per backoffLimit) a worker whose process hangs.
 */
const WORKER_HEALTH_PORT = 8090;

/** The worker pod template both workload kinds use: restricted pod security, writable emptyDirs, the worker's command. */
function workerPodTemplate(
  labels: Record<string, string>,
  workerArgs: string[],
  restartPolicy: 'Never' | 'Always',
  pod: WorkerPodTemplate,
): V1PodTemplateSpec {
  const args = [...workerArgs, '--health-port', String(WORKER_HEALTH_PORT)];
  return {
    metadata: { labels },
    spec: {
      restartPolicy,
      // PodSecurity "restricted": non-root with numeric ids, RuntimeDefault seccomp (see the container's part).
      securityContext: {
        runAsNonRoot: true,
        runAsUser: WORKER_UID,
        runAsGroup: WORKER_UID,
        fsGroup: WORKER_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      volumes: [...WRITABLE_DIRS.map(({ name }) => ({ name, emptyDir: {} })), ...(pod.volumes ?? [])],
      ...(pod.serviceAccountName ? { serviceAccountName: pod.serviceAccountName } : {}),
      ...(Object.keys(pod.nodeSelector).length ? { nodeSelector: pod.nodeSelector } : {}),
      ...(pod.tolerations.length ? { tolerations: pod.tolerations } : {}),
      ...(pod.affinity && Object.keys(pod.affinity).length ? { affinity: pod.affinity } : {}),
      containers: [
        {
          name: 'worker',
          image: pod.image,
          ...(pod.imagePullPolicy ? { imagePullPolicy: pod.imagePullPolicy } : {}),
          ...(pod.command.length ? { command: [...pod.command, 'worker', ...args] } : { args: ['worker', ...args] }),
          ...(Object.keys(pod.resources).length ? { resources: pod.resources } : {}),
          ports: [{ name: 'health', containerPort: WORKER_HEALTH_PORT }],
          // /healthz answers as soon as the process runs (before the worker loads its models): the startup probe
          // bounds the process's own start, the liveness probe a stalled event loop (60 s) from then on.
          startupProbe: { httpGet: { path: '/healthz', port: 'health' }, periodSeconds: 5, failureThreshold: 60 },
          livenessProbe: { httpGet: { path: '/healthz', port: 'health' }, periodSeconds: 10, failureThreshold: 6 },
          ...(pod.envFrom.length ? { envFrom: pod.envFrom } : {}),
          env: [
            { name: 'ARGUS_DATA_DIR', value: '/var/lib/argus/data' },
            { name: 'HOME', value: '/tmp' },
            ...(pod.env ?? []),
          ],
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
          volumeMounts: [...WRITABLE_DIRS, ...(pod.volumeMounts ?? [])],
        },
      ],
    },
  };
}

/** The controller owner reference of a workload: blocking deletion, same namespace, so deleting the resource collects it. */
function ownerReferences(owner: AnyResource) {
  const { name, namespace, uid } = owner.metadata;
  if (!uid) throw new Error(`${owner.kind} ${namespace}/${name} has no uid: read it from the API server first`);
  return [{ apiVersion: owner.apiVersion, kind: owner.kind, name, uid, controller: true, blockOwnerDeletion: true }];
}

/**
 * The indexed batch/v1 Job running a resource's workload: owned by the resource (controller, blocking deletion,
 * same namespace) so that deleting the resource collects it; each pod runs `argus worker <name>` on its share
 * (index from JOB_COMPLETION_INDEX, which the Job controller sets in Indexed mode).
 */
export function buildJob(owner: AnyResource, spec: BatchWorkloadSpec, pod: WorkerPodTemplate): V1Job {
  const { name, namespace } = owner.metadata;
  const ownerRefs = ownerReferences(owner);
  if (!(spec.completions >= 1 && spec.completions <= MAX_COMPLETIONS)) {
    throw new Error(`completions must be 1..${MAX_COMPLETIONS}, not ${spec.completions}`);
  }
  const labels = jobLabels(owner, spec.worker);
  pod = podTemplateFor(pod, spec.worker);
  const args = [spec.worker, '--job', `${namespace}/${name}`, '--completions', String(spec.completions)];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: jobName(owner), namespace, labels, ownerReferences: ownerRefs },
    spec: {
      completionMode: 'Indexed',
      completions: spec.completions,
      parallelism: Math.min(spec.parallelism, spec.completions),
      backoffLimit: spec.backoffLimit,
      ttlSecondsAfterFinished: pod.ttlSecondsAfterFinished,
      template: workerPodTemplate(labels, args, 'Never', pod),
    },
  };
}

/** How long a Deployment may make no progress before its Progressing condition says ProgressDeadlineExceeded. */
export const PROGRESS_DEADLINE_SECONDS = 600;

/**
 * The apps/v1 Deployment of a long-running workload: `replicas` pods running `argus worker <name> --resource
 * <ns>/<name>` (restartPolicy Always: the kubelet restarts a worker that ends), the same pod template, labels and
 * owner reference as a Job, so deleting the resource collects it with its ReplicaSets and pods. Its name is the Job's
 * (`<kind>-<name>`); `Recreate` so that two workers of one resource never run side by side during a rollout.
 */
export function buildDeployment(
  owner: AnyResource,
  spec: LongRunningWorkloadSpec,
  pod: WorkerPodTemplate,
): V1Deployment {
  const { name, namespace } = owner.metadata;
  const ownerRefs = ownerReferences(owner);
  const labels = jobLabels(owner, spec.worker);
  pod = podTemplateFor(pod, spec.worker);
  const selector = { 'argus.dev/kind': labels['argus.dev/kind'], 'argus.dev/name': labels['argus.dev/name'] };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: jobName(owner), namespace, labels, ownerReferences: ownerRefs },
    spec: {
      replicas: spec.replicas,
      selector: { matchLabels: selector },
      strategy: { type: 'Recreate' },
      progressDeadlineSeconds: PROGRESS_DEADLINE_SECONDS,
      revisionHistoryLimit: 2,
      template: workerPodTemplate(labels, [spec.worker, '--resource', `${namespace}/${name}`], 'Always', pod),
    },
  };
}
