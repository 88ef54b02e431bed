import { BatchV1Api, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { API_VERSION, RESOURCES, type AnyResource, type KindName } from '../../api/index.js';
import type { WorkloadDriver, WorkloadOwner, WorkloadSpec, WorkloadStatus } from '../../ports/index.js';
import { statusCode, toStoreError } from './api-errors.js';
import { RestartingInformer, type RestartBackoff } from './informer.js';
import { buildJob, jobName, MANAGED_BY, type WorkerPodTemplate } from './job-manifest.js';

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
  private readonly listeners = new Set<(owner: WorkloadOwner) => void>();
  private informer?: RestartingInformer<V1Job>;

  constructor(
    private readonly config: KubeConfig,
    private readonly pod: WorkerPodTemplate,
    private readonly options: JobWorkloadDriverOptions = {},
  ) {
    this.api = config.makeApiClient(BatchV1Api);
  }

  /**
   * Tells `listener` of every change of a Job this operator made (its pods starting, succeeding, failing; the Job
   * completing or failing), so a controller reconciles the owner at once instead of at its next resync. The first
   * listener starts a watch on the operator's Jobs (by label); the last one to leave stops it.
   */
  onChange(listener: (owner: WorkloadOwner) => void): () => void {
    this.listeners.add(listener);
    if (!this.informer) {
      const ns = this.options.watchNamespace;
      const labelSelector = `app.kubernetes.io/managed-by=${MANAGED_BY}`;
      const tell = (job: V1Job) => {
        const owner = ownerOf(job);
        if (owner) for (const l of this.listeners) l(owner);
      };
      this.informer = new RestartingInformer<V1Job>(
        this.config,
        ns ? `/apis/batch/v1/namespaces/${encodeURIComponent(ns)}/jobs` : '/apis/batch/v1/jobs',
        () =>
          ns
            ? this.api.listNamespacedJob({ namespace: ns, labelSelector })
            : this.api.listJobForAllNamespaces({ labelSelector }),
        { added: tell, modified: tell, deleted: tell, failed: (error) => this.options.onWatchError?.(error) },
        {
          timeoutSeconds: 300,
          backoff: this.options.restartBackoff ?? { baseMs: 200, maxMs: 30_000 },
          labelSelector,
        },
      );
      void this.informer.start();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0 || !this.informer) return;
      void this.informer.stop();
      this.informer = undefined;
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

  async inspect(owner: AnyResource): Promise<WorkloadStatus | undefined> {
    const job = await this.read(owner);
    return job && workloadStatus(job);
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
    try {
      const job = await this.api.readNamespacedJob({ name, namespace });
      return ownedBy(job, owner) ? job : undefined;
    } catch (error) {
      if (statusCode(error) === 404) return undefined;
      throw toStoreError(error, `read Job ${namespace}/${name}`);
    }
  }
}
