import { isDeepStrictEqual } from 'node:util';
import type { IngestJob } from '../../api/index.js';
import { updateStatusWithRetry, type ResourceStore, type WorkloadDriver } from '../../ports/index.js';
import type { OperatorConfig } from '../../config.js';
import type { Logger } from '../../../services/lib/log/index.js';
import { KeyedQueue } from '../../../services/lib/keyed-queue/index.js';
import { Controller, type ObjectKey } from '../runtime/controller.js';
import type { ControllerMetrics } from '../runtime/metrics.js';
import { decideIngestJob, isTerminal, type IngestJobDecision } from './reconcile.js';
import { planRetention } from './retention.js';
import { ingestWorkload } from './workload.js';

/** What the IngestJob controller works with. */
export interface IngestJobControllerDeps {
  store: ResourceStore;
  driver: WorkloadDriver;
  config: OperatorConfig;
  logger: Logger;
  metrics: ControllerMetrics;
  namespace?: string;
  /** The clock (tests move it to check retention by age). */
  now?: () => Date;
}

/** Longest wait between retention sweeps (clock changes, jobs whose expiry was not foreseen). */
const MAX_SWEEP_INTERVAL_MS = 3600_000;

/**
 * The IngestJob controller: makes each job's workload, derives its state, counts and conditions from the workers'
 * item results and the workload (decideIngestJob), removes the workload of a job cancelled before it started, and
 * deletes finished jobs past the retention.
 */
export class IngestJobController {
  private readonly controller: Controller<'IngestJob'>;
  private readonly sweeps = new KeyedQueue<'sweep'>({
    handler: () => this.sweep(),
    onError: (_key, error, retryInMs) =>
      this.deps.logger.warn('retention sweep failed; retrying', { retryInMs, error: String(error) }),
  });
  private sweepTimer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
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
      logger: deps.logger,
      metrics: deps.metrics,
    });
  }

  /** Watches IngestJobs and workload changes, and sweeps finished jobs once now. */
  async start(): Promise<void> {
    this.unsubscribe = this.deps.driver.onChange?.((owner) => {
      if (owner.kind === 'IngestJob') this.controller.enqueue(owner);
    });
    await this.controller.start();
    this.sweeps.enqueue('sweep');
  }

  /** Stops reconciling and sweeping; workloads keep running (the driver owns them). */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    clearTimeout(this.sweepTimer);
    await this.controller.stop();
    await this.sweeps.close();
  }

  /** Deletes finished jobs past the retention now, and plans the next sweep. */
  async sweep(): Promise<void> {
    const { store, config, namespace, logger } = this.deps;
    const plan = planRetention(await store.list('IngestJob', namespace), config.retention, this.now());
    for (const job of plan.expired) {
      await store.delete('IngestJob', job.metadata.namespace, job.metadata.name);
      logger.info('finished IngestJob deleted (retention)', {
        job: `${job.metadata.namespace}/${job.metadata.name}`,
        state: job.status?.state,
      });
    }
    clearTimeout(this.sweepTimer);
    const delay = Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(1000, plan.nextExpiryMs ?? MAX_SWEEP_INTERVAL_MS));
    this.sweepTimer = setTimeout(() => this.sweeps.enqueue('sweep'), delay);
    this.sweepTimer.unref();
  }

  private async reconcile({ namespace, name }: ObjectKey): Promise<void> {
    const { store, driver, config, logger } = this.deps;
    const job = await store.get('IngestJob', namespace, name);
    if (!job || isTerminal(job)) return;
    let workload = await driver.inspect(job);
    const first = decideIngestJob({ job, workload, now: this.timestamp() });
    if (first.ensureWorkload && !workload) {
      await driver.ensure(job, ingestWorkload(job, config));
      workload = await driver.inspect(job);
    }
    let decision: IngestJobDecision = first;
    const written = await updateStatusWithRetry(store, 'IngestJob', namespace, name, (latest) => {
      decision = decideIngestJob({ job: latest, workload, now: this.timestamp() });
      return isDeepStrictEqual(decision.status, latest.status ?? {}) ? undefined : decision.status;
    });
    if (!written) return;
    if (decision.removeWorkload) await driver.remove(written);
    if (isTerminal(written) && !isTerminal(job)) {
      logger.info('IngestJob finished', logFields(written));
      this.sweeps.enqueue('sweep');
    }
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
