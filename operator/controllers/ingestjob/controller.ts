import { RetentionSweeps } from '../runtime/retention-sweeps.js';
import { isDeepStrictEqual } from 'node:util';
import type { IngestJob } from '../../api/index.js';
import {
  updateStatusWithRetry,
  type EventSink,
  type ResourceEvent,
  type ResourceStore,
  type WorkloadDriver,
} from '../../ports/index.js';
import type { ControllerSettings } from '../settings.js';
import type { Logger } from '../../../services/lib/log/index.js';
import { Controller, type ObjectKey, type ReconcileResult } from '../runtime/controller.js';
import type { ControllerMetrics } from '../runtime/metrics.js';
import { ingestJobEvents, workloadCreatedEvent } from './events.js';
import { decideIngestJob, isTerminal, type IngestJobDecision } from './reconcile.js';
import { planRetention } from './retention.js';
import { ingestWorkload } from './workload.js';

/** What the IngestJob controller works with. */
export interface IngestJobControllerDeps {
  store: ResourceStore;
  driver: WorkloadDriver;
  config: ControllerSettings;
  logger: Logger;
  metrics: ControllerMetrics;
  namespace?: string;
  /** The clock (tests move it to check retention by age and the pending deadline). */
  now?: () => Date;
  /** Where the controller's Events go (the cluster's Events API); none embedded. */
  events?: EventSink;
}

/**
 * The IngestJob controller: makes each job's workload, derives its state, counts and conditions from the workers'
 * item results and the workload (decideIngestJob), removes the workload of a job cancelled before it started, and
 * deletes finished jobs past the retention.
 */
export class IngestJobController {
  private readonly controller: Controller<'IngestJob'>;
  private readonly sweeps = new RetentionSweeps(
    () => this.sweep(),
    (error, retryInMs) =>
      this.deps.logger.warn('retention sweep failed; retrying', { retryInMs, error: String(error) }),
  );
  private readonly now: () => Date;

  constructor(private readonly deps: IngestJobControllerDeps) {
    this.now = deps.now ?? (() => new Date());
    this.controller = new Controller({
      name: 'ingestjob',
      kind: 'IngestJob',
      store: deps.store,
      namespace: deps.namespace,
      reconcile: (key) => this.reconcile(key),
      deleted: (job) => deps.driver.remove(job),
      resyncMs: deps.config.resyncSeconds * 1000,
      workloads: deps.driver,
      logger: deps.logger,
      metrics: deps.metrics,
    });
  }

  /** Watches IngestJobs and workload changes, and sweeps finished jobs once now. */
  async start(): Promise<void> {
    await this.controller.start();
    this.sweeps.request();
  }

  /** Stops reconciling and sweeping; workloads keep running (the driver owns them). */
  async stop(): Promise<void> {
    await this.controller.stop();
    await this.sweeps.close();
  }

  /** Deletes finished jobs past the retention now; answers when the next kept one expires (RetentionSweeps plans it). */
  async sweep(): Promise<number | undefined> {
    const { store, config, namespace, logger } = this.deps;
    const plan = planRetention(await store.list('IngestJob', namespace), config.retention, this.now());
    for (const job of plan.expired) {
      await store.delete('IngestJob', job.metadata.namespace, job.metadata.name);
      logger.info('finished IngestJob deleted (retention)', {
        job: `${job.metadata.namespace}/${job.metadata.name}`,
        state: job.status?.state,
      });
    }
    return plan.nextExpiryMs;
  }

  private async reconcile({ namespace, name }: ObjectKey): Promise<ReconcileResult | void> {
    const { store, driver, config, logger } = this.deps;
    const job = await store.get('IngestJob', namespace, name);
    if (!job || isTerminal(job)) return;
    const pendingDeadlineSeconds = config.ingest.pendingDeadlineSeconds;
    let workload = await driver.inspect(job);
    const first = decideIngestJob({ job, workload, now: this.timestamp(), pendingDeadlineSeconds });
    if (first.ensureWorkload && !workload) {
      const spec = ingestWorkload(job, config);
      await driver.ensure(job, spec);
      this.tell(job, workloadCreatedEvent(spec));
      workload = await driver.inspect(job);
    }
    let decision: IngestJobDecision = first;
    let before = job.status ?? {};
    const written = await updateStatusWithRetry(store, 'IngestJob', namespace, name, (latest) => {
      before = latest.status ?? {};
      decision = decideIngestJob({ job: latest, workload, now: this.timestamp(), pendingDeadlineSeconds });
      return isDeepStrictEqual(decision.status, before) ? undefined : decision.status;
    });
    const requeue = decision.requeueAfterMs === undefined ? undefined : { requeueAfterMs: decision.requeueAfterMs };
    if (!written) return requeue;
    for (const event of ingestJobEvents(before, written.status ?? {})) this.tell(written, event);
    if (decision.removeWorkload) await driver.remove(written);
    if (isTerminal(written) && !isTerminal(job)) {
      logger.info('IngestJob finished', logFields(written));
      this.sweeps.request();
    }
    return requeue;
  }

  /** Records an Event about the job; a failure is logged, never a reason to reconcile again. */
  private tell(job: IngestJob, event: ResourceEvent): void {
    this.deps.events?.record(job, event).catch((error) =>
      this.deps.logger.warn('could not record an IngestJob Event', {
        job: `${job.metadata.namespace}/${job.metadata.name}`,
        reason: event.reason,
        error: error instanceof Error ? error.message : String(error),
      }),
    );
  }

  private timestamp(): string {
    return this.now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');
  }
}

function logFields(job: IngestJob): Record<string, unknown> {
  const s = job.status ?? {};
  return {
    job: `${job.metadata.namespace}/${job.metadata.name}`,
    state: s.state,
    completed: s.completed,
    failed: s.failed,
    skipped: s.skipped,
  };
}
