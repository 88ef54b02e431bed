import { BatchV1Api, CoreV1Api, type KubeConfig, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { API_VERSION, RESOURCES, type AnyResource, type KindName } from '../../api/index.js';
import type { WorkloadDriver, WorkloadOwner, WorkloadSpec, WorkloadStatus } from '../../ports/index.js';
import { statusCode, toStoreError } from './api-errors.js';
import { listAllPages, RestartingInformer, type RestartBackoff } from './informer.js';
import { buildJob, jobName, MANAGED_BY, type WorkerPodTemplate } from './job-manifest.js';
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

/** The Argus resource a Job belongs to (its controller owner reference), if any. */
function ownerOf(job: V1Job): WorkloadOwner | undefined {
  const ref = job.metadata?.ownerReferences?.find((r) => r.controller && r.apiVersion === API_VERSION);
  const namespace = job.metadata?.namespace;
  if (!ref || !namespace || !(ref.kind in RESOURCES)) return undefined;
  return { kind: ref.kind as KindName, namespace, name: ref.name };
}

/** Whether the Job was made for this owner (a Job of a deleted namesake may linger until collected). */
function ownedBy(job: V1Job, owner: AnyResource): boolean {
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

/**
 * The WorkloadDriver port on batch/v1 Jobs: one indexed Job per resource, owned by it, so deleting the resource
 * garbage-collects the Job and its pods.
 */
export class JobWorkloadDriver implements WorkloadDriver {
  private readonly api: BatchV1Api;
  private readonly core: CoreV1Api;
  private readonly listeners = new Set<(owner: WorkloadOwner) => void>();
  private informers?: [RestartingInformer<V1Job>, RestartingInformer<V1Pod>];

  constructor(
    private readonly config: KubeConfig,
    private readonly pod: WorkerPodTemplate,
    private readonly options: JobWorkloadDriverOptions = {},
  ) {
    this.api = config.makeApiClient(BatchV1Api);
    this.core = config.makeApiClient(CoreV1Api);
  }

  /**
   * Tells `listener` of every change of a Job this operator made (the Job completing or failing, its counts) and of
   * its pods (scheduled or not, an image that cannot be pulled, a worker running), so a controller reconciles the
   * owner at once instead of at its next resync. The first listener starts watches on the operator's Jobs and pods
   * (by label); the last one to leave stops them.
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
      const onPod = (pod: V1Pod) =>
        tell(jobOwners.get(`${pod.metadata?.namespace}/${pod.metadata?.labels?.['batch.kubernetes.io/job-name']}`));
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
  async inspect(owner: AnyResource): Promise<WorkloadStatus | undefined> {
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

  async remove(owner: AnyResource): Promise<void> {
    const { namespace } = owner.metadata;
    const name = jobName(owner);
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
}
