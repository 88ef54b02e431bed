import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Deployment,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node';
import { API_VERSION, RESOURCES, type AnyResource, type KindName } from '../../api/index.js';
import type { WorkloadDriver, WorkloadMode, WorkloadOwner, WorkloadSpec, WorkloadStatus } from '../../ports/index.js';
import { statusCode, toStoreError } from './api-errors.js';
import { listAllPages, RestartingInformer, type RestartBackoff } from './informer.js';
import { buildDeployment, buildJob, jobName, MANAGED_BY, type WorkerPodTemplate } from './job-manifest.js';
import { deploymentStatus } from './deployment-status.js';
import { lastFailedCreate, podActive, whyPodsWait } from './workers-waiting.js';

/** Options of the Job driver besides the pod template. */
export interface JobWorkloadDriverOptions {
  /** Jobs are watched in this namespace only (WATCH_NAMESPACE); all namespaces when undefined. */
  watchNamespace?: string;
  /** Back-off between restarts of a failed Job list or watch. */
  restartBackoff?: RestartBackoff;
  /** Told of every Job list or watch failure (the watch restarts by itself). */
  onWatchError?: (error: unknown) => void;
}

/** The Argus resource a Job or Deployment belongs to (its controller owner reference), if any. */
function ownerOf(job: V1Job | V1Deployment): WorkloadOwner | undefined {
  const ref = job.metadata?.ownerReferences?.find((r) => r.controller && r.apiVersion === API_VERSION);
  const namespace = job.metadata?.namespace;
  if (!ref || !namespace || !(ref.kind in RESOURCES)) return undefined;
  return { kind: ref.kind as KindName, namespace, name: ref.name };
}

/** Whether the Job (or Deployment) was made for this owner (one of a deleted namesake may linger until collected). */
function ownedBy(job: V1Job | V1Deployment, owner: AnyResource): boolean {
  return (job.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === owner.metadata.uid);
}

function condition(job: V1Job, type: string) {
  return job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
}

/** A Job's status as the controllers see it. */
export function workloadStatus(job: V1Job): WorkloadStatus {
  const failed = condition(job, 'Failed');
  const startTime = job.status?.startTime;
  return {
    active: job.status?.active ?? 0,
    ready: job.status?.ready ?? 0,
    succeeded: job.status?.succeeded ?? 0,
    failed: job.status?.failed ?? 0,
    complete: condition(job, 'Complete') !== undefined,
    ...(failed
      ? {
          failure: {
            reason: failed.reason ?? 'Failed',
            message:
              failed.reason === 'BackoffLimitExceeded'
                ? `worker pods failed ${job.status?.failed ?? 0} times, more than the back-off limit of ${job.spec?.backoffLimit ?? 0} retries`
                : (failed.message ?? 'the Job failed'),
          },
        }
      : {}),
    ...(startTime ? { startTime: new Date(startTime).toISOString() } : {}),
  };
}

/** The labels that name a workload's owner on its pods: `<ns>/<kind>/<name label>`. */
function podOwnerKey(namespace: string | undefined, labels: Record<string, string> | undefined): string {
  return `${namespace}/${labels?.['argus.dev/kind']}/${labels?.['argus.dev/name']}`;
}

/**
 * The WorkloadDriver port on batch/v1 Jobs (batch: one indexed Job per resource) and apps/v1 Deployments
 * (long-running), each owned by its resource, so deleting the resource garbage-collects the workload and its pods.
 */
export class JobWorkloadDriver implements WorkloadDriver {
  private readonly api: BatchV1Api;
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly listeners = new Set<(owner: WorkloadOwner) => void>();
  private informers?: [RestartingInformer<V1Job>, RestartingInformer<V1Pod>, RestartingInformer<V1Deployment>];

  constructor(
    private readonly config: KubeConfig,
    private readonly pod: WorkerPodTemplate,
    private readonly options: JobWorkloadDriverOptions = {},
  ) {
    this.api = config.makeApiClient(BatchV1Api);
    this.apps = config.makeApiClient(AppsV1Api);
    this.core = config.makeApiClient(CoreV1Api);
  }

  /**
   * Tells `listener` of every change of a Job or Deployment this operator made (the Job completing or failing, its
   * counts, the Deployment's available replicas) and of their pods (scheduled or not, an image that cannot be pulled,
   * a worker running or restarted), so a controller reconciles the owner at once instead of at its next resync. The
   * first listener starts watches on the operator's Jobs, Deployments and pods (by label); the last one to leave
   * stops them.
   */
  onChange(listener: (owner: WorkloadOwner) => void): () => void {
    this.listeners.add(listener);
    if (!this.informers) {
      const ns = this.options.watchNamespace;
      const labelSelector = `app.kubernetes.io/managed-by=${MANAGED_BY}`;
      const where = ns ? `/namespaces/${encodeURIComponent(ns)}` : '';
      const tell = (owner: WorkloadOwner | undefined) => {
        if (owner) for (const l of this.listeners) l(owner);
      };
      // A pod names its Job by label; the Job names its owner.
      const jobOwners = new Map<string, WorkloadOwner>();
      const onJob = (job: V1Job) => {
        const owner = ownerOf(job);
        if (owner) jobOwners.set(`${job.metadata?.namespace}/${job.metadata?.name}`, owner);
        tell(owner);
      };
      // A Deployment's pods carry its labels (owner kind and name).
      const deploymentOwners = new Map<string, WorkloadOwner>();
      const onDeployment = (deployment: V1Deployment) => {
        const owner = ownerOf(deployment);
        const key = podOwnerKey(deployment.metadata?.namespace, deployment.metadata?.labels);
        if (owner) deploymentOwners.set(key, owner);
        tell(owner);
      };
      const onPod = (pod: V1Pod) => {
        const jobName = pod.metadata?.labels?.['batch.kubernetes.io/job-name'];
        if (jobName) tell(jobOwners.get(`${pod.metadata?.namespace}/${jobName}`));
        else tell(deploymentOwners.get(podOwnerKey(pod.metadata?.namespace, pod.metadata?.labels)));
      };
      const failed = (error: unknown) => this.options.onWatchError?.(error);
      const options = {
        timeoutSeconds: 300,
        backoff: this.options.restartBackoff ?? { baseMs: 200, maxMs: 30_000 },
        labelSelector,
      };
      this.informers = [
        new RestartingInformer<V1Job>(
          this.config,
          `/apis/batch/v1${where}/jobs`,
          () =>
            listAllPages((page) =>
              ns
                ? this.api.listNamespacedJob({ namespace: ns, labelSelector, ...page })
                : this.api.listJobForAllNamespaces({ labelSelector, ...page }),
            ),
          {
            added: onJob,
            modified: onJob,
            deleted: (job) => {
              jobOwners.delete(`${job.metadata?.namespace}/${job.metadata?.name}`);
              tell(ownerOf(job));
            },
            failed,
          },
          options,
        ),
        new RestartingInformer<V1Pod>(
          this.config,
          `/api/v1${where}/pods`,
          () =>
            listAllPages((page) =>
              ns
                ? this.core.listNamespacedPod({ namespace: ns, labelSelector, ...page })
                : this.core.listPodForAllNamespaces({ labelSelector, ...page }),
            ),
          { added: onPod, modified: onPod, deleted: onPod, failed },
          options,
        ),
        new RestartingInformer<V1Deployment>(
          this.config,
          `/apis/apps/v1${where}/deployments`,
          () =>
            listAllPages((page) =>
              ns
                ? this.apps.listNamespacedDeployment({ namespace: ns, labelSelector, ...page })
                : this.apps.listDeploymentForAllNamespaces({ labelSelector, ...page }),
            ),
          {
            added: onDeployment,
            modified: onDeployment,
            deleted: (deployment) => {
              deploymentOwners.delete(podOwnerKey(deployment.metadata?.namespace, deployment.metadata?.labels));
              tell(ownerOf(deployment));
            },
            failed,
          },
          options,
        ),
      ];
      for (const informer of this.informers) void informer.start();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0 || !this.informers) return;
      for (const informer of this.informers) void informer.stop();
      this.informers = undefined;
    };
  }

  async ensure(owner: AnyResource, spec: WorkloadSpec): Promise<void> {
    if (spec.mode === 'long-running') return this.ensureDeployment(owner, buildDeployment(owner, spec, this.pod));
    const body = buildJob(owner, spec, this.pod);
    const { namespace } = owner.metadata;
    try {
      await this.api.createNamespacedJob({ namespace, body });
    } catch (error) {
      if (statusCode(error) !== 409) throw toStoreError(error, `create Job ${namespace}/${body.metadata!.name}`);
      const existing = await this.read(owner);
      if (!existing) {
        throw new Error(
          `Job ${namespace}/${body.metadata!.name} belongs to an earlier ${owner.kind} of that name and is being deleted`,
        );
      }
    }
  }

  /**
   * The Job's status; while no worker runs (`ready` 0, not finished) also its pods and Events, because `active`
   * counts Pending pods and a refused pod shows only as a FailedCreate Event: a Running pod counts as ready (the
   * Job's status may lag), else `waiting` says what the pods wait for.
   */
  async inspect(owner: AnyResource, mode: WorkloadMode = 'batch'): Promise<WorkloadStatus | undefined> {
    if (mode === 'long-running') return this.inspectDeployment(owner);
    const job = await this.read(owner);
    if (!job) return undefined;
    const status = workloadStatus(job);
    if (status.ready > 0 || status.complete || status.failure) return status;
    const { namespace } = owner.metadata;
    const selector = Object.entries(job.spec?.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
    const pods = selector.length
      ? (await this.core.listNamespacedPod({ namespace, labelSelector: selector.join(',') })).items
      : [];
    const running = pods.filter((p) => podActive(p) && p.status?.phase === 'Running').length;
    if (running > 0) return { ...status, ready: running };
    let waiting = whyPodsWait(pods);
    if (!waiting && !pods.some(podActive)) {
      const fieldSelector = `involvedObject.uid=${job.metadata!.uid}`;
      waiting = lastFailedCreate((await this.core.listNamespacedEvent({ namespace, fieldSelector })).items);
    }
    return waiting ? { ...status, waiting } : status;
  }

  async remove(owner: AnyResource, mode: WorkloadMode = 'batch'): Promise<void> {
    const { namespace } = owner.metadata;
    const name = jobName(owner);
    if (mode === 'long-running') {
      try {
        await this.apps.deleteNamespacedDeployment({ name, namespace, propagationPolicy: 'Background' });
      } catch (error) {
        if (statusCode(error) !== 404) throw toStoreError(error, `delete Deployment ${namespace}/${name}`);
      }
      return;
    }
    try {
      // Without a propagation policy the API deletes a Job but orphans its pods.
      await this.api.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' });
    } catch (error) {
      if (statusCode(error) !== 404) throw toStoreError(error, `delete Job ${namespace}/${name}`);
    }
  }

  /** This owner's Job, or undefined (none, or one left by a deleted namesake). */
  private async read(owner: AnyResource): Promise<V1Job | undefined> {
    const { namespace } = owner.metadata;
    const name = jobName(owner);
    // From the Job watch's cache when it holds the Job; a Job just created may not be there yet: then a live read.
    const cached = this.informers?.[0]?.cached(namespace, name);
    if (cached) return ownedBy(cached, owner) ? cached : undefined;
    try {
      const job = await this.api.readNamespacedJob({ name, namespace });
      return ownedBy(job, owner) ? job : undefined;
    } catch (error) {
      if (statusCode(error) === 404) return undefined;
      throw toStoreError(error, `read Job ${namespace}/${name}`);
    }
  }

  private async ensureDeployment(owner: AnyResource, body: V1Deployment): Promise<void> {
    const { namespace } = owner.metadata;
    try {
      await this.apps.createNamespacedDeployment({ namespace, body });
    } catch (error) {
      if (statusCode(error) !== 409) throw toStoreError(error, `create Deployment ${namespace}/${body.metadata!.name}`);
      if (!(await this.readDeployment(owner))) {
        throw new Error(
          `Deployment ${namespace}/${body.metadata!.name} belongs to an earlier ${owner.kind} of that name and is being deleted`,
        );
      }
    }
  }

  /**
   * The Deployment's status with its pods: available replicas (a Running pod counts at once: the status may lag),
   * container restarts and the last termination, and while none runs why (the pods' waiting reasons, ReplicaFailure
   * FailedCreate when admission refused them, ProgressDeadlineExceeded).
   */
  private async inspectDeployment(owner: AnyResource): Promise<WorkloadStatus | undefined> {
    const deployment = await this.readDeployment(owner);
    if (!deployment) return undefined;
    const { namespace } = owner.metadata;
    const selector = Object.entries(deployment.spec?.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
    const pods = selector.length
      ? (await this.core.listNamespacedPod({ namespace, labelSelector: selector.join(',') })).items
      : [];
    return deploymentStatus(deployment, pods);
  }

  /** This owner's Deployment (the watch's cache, else a live read), or undefined. */
  private async readDeployment(owner: AnyResource): Promise<V1Deployment | undefined> {
    const { namespace } = owner.metadata;
    const name = jobName(owner);
    const cached = this.informers?.[2]?.cached(namespace, name);
    if (cached) return ownedBy(cached, owner) ? cached : undefined;
    try {
      const deployment = await this.apps.readNamespacedDeployment({ name, namespace });
      return ownedBy(deployment, owner) ? deployment : undefined;
    } catch (error) {
      if (statusCode(error) === 404) return undefined;
      throw toStoreError(error, `read Deployment ${namespace}/${name}`);
    }
  }
}
