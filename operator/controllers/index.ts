import type { Registry } from 'prom-client';
import type { EventSink, ResourceStore, WorkloadDriver } from '../ports/index.js';
import type { ControllerSettings } from './settings.js';
import type { Logger } from '../../services/lib/log/index.js';
import { CameraWatcherController } from './camerawatcher/controller.js';
import { CaptionRunController } from './captionrun/controller.js';
import { IngestJobController } from './ingestjob/controller.js';
import { controllerMetrics } from './runtime/metrics.js';

export type { ControllerSettings } from './settings.js';
export { Controller } from './runtime/controller.js';
export type { ControllerOptions, ObjectKey, ReconcileResult } from './runtime/controller.js';
export { controllerMetrics } from './runtime/metrics.js';
export type { ControllerMetrics } from './runtime/metrics.js';
export { setConditions } from './conditions.js';
export type { DesiredCondition } from './conditions.js';
export { decideIngestJob, isTerminal, SKIPPED_BY_CANCEL } from './ingestjob/reconcile.js';
export { ingestWorkload } from './ingestjob/workload.js';
export { planRetention } from './ingestjob/retention.js';
export { CAMERA_WATCHER_WORKLOAD, decideCameraWatcher } from './camerawatcher/reconcile.js';
export { CAPTION_RUN_WORKLOAD, decideCaptionRun, isFinished as isCaptionRunFinished } from './captionrun/reconcile.js';
export { planCaptionRunRetention } from './captionrun/retention.js';

/** What the controllers run on: the same in both modes, only the store and the driver differ. */
export interface ControllersOptions {
  store: ResourceStore;
  driver: WorkloadDriver;
  config: ControllerSettings;
  logger: Logger;
  /** Where reconcile counts, durations, errors and queue depths are registered. */
  registry: Registry;
  /** Reconcile one namespace only (all when undefined). */
  namespace?: string;
  /** The clock (tests move it). */
  now?: () => Date;
  /** Where controllers record Events (the cluster's Events API); none embedded. */
  events?: EventSink;
}

/** Running controllers. */
export interface RunningControllers {
  /** Stops every controller and waits for reconciles in progress (workloads keep running). */
  stop(): Promise<void>;
}

/** Starts every controller of the operator: IngestJob, CameraWatcher, CaptionRun. */
export async function startControllers(options: ControllersOptions): Promise<RunningControllers> {
  const metrics = controllerMetrics(options.registry);
  const controllers = [
    new IngestJobController({ ...options, metrics }),
    new CameraWatcherController({ ...options, metrics }),
    new CaptionRunController({ ...options, metrics }),
  ];
  const started: typeof controllers = [];
  try {
    for (const controller of controllers) {
      await controller.start();
      started.push(controller);
    }
  } catch (error) {
    await Promise.all(started.map((c) => c.stop()));
    throw error;
  }
  options.logger.info('controllers started', {
    controllers: ['ingestjob', 'camerawatcher', 'captionrun'],
    namespace: options.namespace ?? '(all)',
  });
  return { stop: async () => void (await Promise.all(controllers.map((c) => c.stop()))) };
}
