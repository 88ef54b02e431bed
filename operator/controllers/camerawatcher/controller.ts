import { isDeepStrictEqual } from 'node:util';
import { updateStatusWithRetry, type ResourceStore, type WorkloadDriver } from '../../ports/index.js';
import type { ControllerSettings } from '../settings.js';
import type { Logger } from '../../../services/lib/log/index.js';
import { Controller, type ObjectKey } from '../runtime/controller.js';
import type { ControllerMetrics } from '../runtime/metrics.js';
import { CAMERA_WATCHER_WORKLOAD, decideCameraWatcher } from './reconcile.js';

/** What the CameraWatcher controller works with. */
export interface CameraWatcherControllerDeps {
  store: ResourceStore;
  driver: WorkloadDriver;
  config: ControllerSettings;
  logger: Logger;
  metrics: ControllerMetrics;
  namespace?: string;
  /** The clock of the conditions' transition times. */
  now?: () => Date;
}

/**
 * The CameraWatcher controller: keeps one long-running camera-watcher worker per enabled watcher (a Deployment in the
 * cluster, a restarted task embedded), removes it when the watcher is disabled or deleted, and writes the watcher's
 * phase and conditions (decideCameraWatcher) with conflict retry, leaving the worker's own status fields as they are
 * and writing nothing when nothing changed.
 */
export class CameraWatcherController {
  private readonly controller: Controller<'CameraWatcher'>;
  private readonly now: () => Date;

  constructor(private readonly deps: CameraWatcherControllerDeps) {
    this.now = deps.now ?? (() => new Date());
    this.controller = new Controller({
      name: 'camerawatcher',
      kind: 'CameraWatcher',
      store: deps.store,
      namespace: deps.namespace,
      reconcile: (key) => this.reconcile(key),
      deleted: (watcher) => deps.driver.remove(watcher, 'long-running'),
      resyncMs: deps.config.resyncSeconds * 1000,
      workloads: deps.driver,
      logger: deps.logger,
      metrics: deps.metrics,
    });
  }

  /** Watches CameraWatchers and their workers' changes. */
  async start(): Promise<void> {
    await this.controller.start();
  }

  /** Stops reconciling; workers keep running (the driver owns them). */
  async stop(): Promise<void> {
    await this.controller.stop();
  }

  private async reconcile({ namespace, name }: ObjectKey): Promise<void> {
    const { store, driver, logger } = this.deps;
    const watcher = await store.get('CameraWatcher', namespace, name);
    if (!watcher || watcher.metadata.deletionTimestamp) return;
    let workload = await driver.inspect(watcher, 'long-running');
    const first = decideCameraWatcher({ watcher, workload, now: this.timestamp() });
    if (first.ensureWorkload) {
      await driver.ensure(watcher, CAMERA_WATCHER_WORKLOAD);
      logger.info('camera watcher worker started', { watcher: `${namespace}/${name}`, camera: watcher.spec.camera });
      workload = await driver.inspect(watcher, 'long-running');
    }
    if (first.removeWorkload) {
      await driver.remove(watcher, 'long-running');
      logger.info('camera watcher worker removed (disabled)', { watcher: `${namespace}/${name}` });
    }
    await updateStatusWithRetry(store, 'CameraWatcher', namespace, name, (latest) => {
      const { status } = decideCameraWatcher({ watcher: latest, workload, now: this.timestamp() });
      return isDeepStrictEqual(status, latest.status ?? {}) ? undefined : status;
    });
  }

  private timestamp(): string {
    return this.now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');
  }
}
