import { RetentionSweeps } from '../runtime/retention-sweeps.js';
import { isDeepStrictEqual } from 'node:util';
import { updateStatusWithRetry, type ResourceStore, type WorkloadDriver } from '../../ports/index.js';
import type { ControllerSettings } from '../settings.js';
import type { Logger } from '../../../services/lib/log/index.js';
import { Controller, type ObjectKey, type ReconcileResult } from '../runtime/controller.js';
import type { ControllerMetrics } from '../runtime/metrics.js';
import { CAPTION_RUN_WORKLOAD, decideCaptionRun, isFinished } from './reconcile.js';
import { planCaptionRunRetention } from './retention.js';

/** What the CaptionRun controller works with. */
export interface CaptionRunControllerDeps {
  store: ResourceStore;
  driver: WorkloadDriver;
  config: ControllerSettings;
  logger: Logger;
  metrics: ControllerMetrics;
  namespace?: string;
  /** The clock (tests move it to check retention by age). */
  now?: () => Date;
}

/**
 * The CaptionRun controller: makes each run's caption worker workload (a Deployment in the cluster, a restarted task
 * embedded), follows the phase the worker reports, stops the workload when the run is asked to stop or ends, writes
 * phase and conditions (decideCaptionRun) without touching the worker's counters, and deletes finished runs past the
 * retention (`config.captionRunRetention`).
 */
export class CaptionRunController {
  private readonly controller: Controller<'CaptionRun'>;
  private readonly sweeps = new RetentionSweeps(
    () => this.sweep(),
    (error, retryInMs) =>
      this.deps.logger.warn('caption run retention sweep failed; retrying', { retryInMs, error: String(error) }),
  );
  private readonly now: () => Date;

  constructor(private readonly deps: CaptionRunControllerDeps) {
    this.now = deps.now ?? (() => new Date());
    this.controller = new Controller({
      name: 'captionrun',
      kind: 'CaptionRun',
      store: deps.store,
      namespace: deps.namespace,
      reconcile: (key) => this.reconcile(key),
      deleted: (run) => deps.driver.remove(run, 'long-running'),
      resyncMs: deps.config.resyncSeconds * 1000,
      workloads: deps.driver,
      logger: deps.logger,
      metrics: deps.metrics,
    });
  }

  /** Watches CaptionRuns and their workers' changes, and sweeps finished runs once now. */
  async start(): Promise<void> {
    await this.controller.start();
    this.sweeps.request();
  }

  /** Stops reconciling and sweeping; workers keep running (the driver owns them). */
  async stop(): Promise<void> {
    await this.controller.stop();
    await this.sweeps.close();
  }

  /** Deletes finished runs past the retention now; answers when the next kept one expires (RetentionSweeps plans it). */
  async sweep(): Promise<number | undefined> {
    const { store, config, namespace, logger } = this.deps;
    const plan = planCaptionRunRetention(
      await store.list('CaptionRun', namespace),
      config.captionRunRetention,
      this.now(),
    );
    for (const run of plan.expired) {
      await store.delete('CaptionRun', run.metadata.namespace, run.metadata.name);
      logger.info('finished CaptionRun deleted (retention)', {
        run: `${run.metadata.namespace}/${run.metadata.name}`,
        phase: run.status?.phase,
      });
    }
    return plan.nextExpiryMs;
  }

  private async reconcile({ namespace, name }: ObjectKey): Promise<ReconcileResult | void> {
    const { store, driver, logger } = this.deps;
    const run = await store.get('CaptionRun', namespace, name);
    if (!run || run.metadata.deletionTimestamp) return;
    let workload = await driver.inspect(run, 'long-running');
    if (isFinished(run) && !workload) return;
    const first = decideCaptionRun({ run, workload, now: this.timestamp() });
    if (first.ensureWorkload) {
      await driver.ensure(run, CAPTION_RUN_WORKLOAD);
      logger.info('caption run worker started', { run: `${namespace}/${name}` });
      workload = await driver.inspect(run, 'long-running');
    }
    if (first.removeWorkload) {
      await driver.remove(run, 'long-running');
    }
    const written = await updateStatusWithRetry(store, 'CaptionRun', namespace, name, (current) => {
      const { status } = decideCaptionRun({ run: current, workload, now: this.timestamp() });
      return isDeepStrictEqual(status, current.status ?? {}) ? undefined : status;
    });
    if (written && isFinished(written) && !isFinished(run)) {
      logger.info('CaptionRun finished', {
        run: `${namespace}/${name}`,
        phase: written.status?.phase,
        message: written.status?.message,
      });
      this.sweeps.request();
    }
  }

  private timestamp(): string {
    return this.now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');
  }
}
