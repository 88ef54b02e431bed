import { BatchV1Api, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import type { AnyResource } from '../../api/index.js';
import type { WorkloadDriver, WorkloadSpec, WorkloadStatus } from '../../ports/index.js';
import { statusCode, toStoreError } from './api-errors.js';
import { buildJob, jobName, type WorkerPodTemplate } from './job-manifest.js';

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

  constructor(
    config: KubeConfig,
    private readonly pod: WorkerPodTemplate,
  ) {
    this.api = config.makeApiClient(BatchV1Api);
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
