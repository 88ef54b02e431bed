import {
  API_VERSION,
  INGEST_SPEC_MAX_BYTES,
  ITEM_IDENTIFIER_MAX,
  TERMINAL_INGEST_STATES,
  type IngestJob,
  type IngestJobSpec,
} from '../../../operator/api/index.js';
import { updateWithRetry, type ServiceControlPlane } from '../../../operator/ports/index.js';
import { InvalidInputError } from '../errors.js';
import { isJobName, newJobName } from './job-names.js';

/** One item of the batch job status (contract). */
export interface BatchJobItem {
  identifier: string;
  video_id?: string;
  status: 'success' | 'error' | 'skipped';
  message?: string;
  embeddings_count?: number;
}

/** The contract's batch job status body (plus `skipped`, the count of items cancellation skipped). */
export interface BatchJobStatus {
  status: 'success';
  job_id: string;
  state: string;
  total: number;
  completed: number;
  failed: number;
  skipped: number;
  items: BatchJobItem[];
}

/**
 * The contract's view of an IngestJob. State comes from the controller (`pending` until it has reconciled once);
 * counts are taken from the item results themselves, so they never lag behind the items listed. Items appear as they
 * finish, in item order.
 */
export function batchJobStatus(job: IngestJob): BatchJobStatus {
  const results = [...(job.status?.items ?? [])].sort((a, b) => a.index - b.index);
  const count = (status: string) => results.filter((r) => r.status === status).length;
  return {
    status: 'success',
    job_id: job.metadata.name,
    state: job.status?.state ?? 'pending',
    total: job.spec.items.length,
    completed: count('success'),
    failed: count('error'),
    skipped: count('skipped'),
    items: results.map((r) => ({
      identifier: r.identifier,
      ...(r.videoId === undefined ? {} : { video_id: r.videoId }),
      status: r.status,
      ...(r.message === undefined ? {} : { message: r.message }),
      ...(r.embeddingsCount === undefined ? {} : { embeddings_count: r.embeddingsCount }),
    })),
  };
}

/** An item identifier cut to what a job can hold (ITEM_IDENTIFIER_MAX), as the resource API expects of services. */
export function itemIdentifier(name: string): string {
  return name.length <= ITEM_IDENTIFIER_MAX ? name : `${name.slice(0, ITEM_IDENTIFIER_MAX - 1)}…`;
}

/**
 * dataprep's side of the control plane: it creates IngestJobs and reads or cancels them through the ResourceStore,
 * and never runs their work itself (the controller makes a workload that runs the ingest worker).
 */
export class IngestJobs {
  constructor(private readonly plane: ServiceControlPlane | undefined) {}

  private get controlPlane(): ServiceControlPlane {
    if (!this.plane) throw new Error('this dataprep app was built without a control plane: batch jobs are unavailable');
    return this.plane;
  }

  /**
   * Creates a job for `spec` under a fresh name (the job_id). InvalidInputError when the spec would not fit one API object
   * (INGEST_SPEC_MAX_BYTES: etcd bounds an object's size, and the results need room beside the spec).
   */
  async create(spec: IngestJobSpec): Promise<IngestJob> {
    const bytes = Buffer.byteLength(JSON.stringify(spec));
    if (bytes > INGEST_SPEC_MAX_BYTES) {
      const limit = INGEST_SPEC_MAX_BYTES;
      throw new InvalidInputError(`The batch is too large for one job (${bytes} bytes of item data, at most ${limit})`);
    }
    return this.controlPlane.resources.create('IngestJob', {
      apiVersion: API_VERSION,
      kind: 'IngestJob',
      metadata: {
        name: newJobName(),
        namespace: this.controlPlane.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'argus-dataprep', 'argus.dev/source': spec.source.replace('_', '-') },
      },
      spec,
    });
  }

  /** The job named `jobId`, or undefined (also for ids that cannot be job names). */
  get(jobId: string): Promise<IngestJob | undefined> {
    if (!isJobName(jobId)) return Promise.resolve(undefined);
    return this.controlPlane.resources.get('IngestJob', this.controlPlane.namespace, jobId);
  }

  /**
   * Requests cooperative cancellation (`spec.cancelRequested`, read-modify-write with conflict retry) and returns the
   * job as it is then; a terminal or already cancelled job is returned unchanged; undefined when there is no such job.
   */
  async cancel(jobId: string): Promise<IngestJob | undefined> {
    if (!isJobName(jobId)) return undefined;
    const { resources, namespace } = this.controlPlane;
    return updateWithRetry(resources, 'IngestJob', namespace, jobId, (job) => {
      const terminal = job.status?.state !== undefined && TERMINAL_INGEST_STATES.includes(job.status.state);
      if (terminal || job.spec.cancelRequested) return undefined;
      return { ...job, spec: { ...job.spec, cancelRequested: true } };
    });
  }
}
