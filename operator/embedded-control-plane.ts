import path from 'node:path';
import client from 'prom-client';
import type { ControllerSettings } from './controllers/index.js';
import { startControllers, type RunningControllers } from './controllers/index.js';
import { EmbeddedResourceStore, EmbeddedWorkloadDriver } from './drivers/embedded/index.js';
import type { ServiceControlPlane } from './ports/index.js';
import type { Logger } from '../services/lib/log/index.js';

/** Options of the embedded control plane. */
export interface EmbeddedControlPlaneOptions {
  /** ARGUS_DATA_DIR: resources are kept under `<dataDir>/control-plane/`. */
  dataDir: string;
  /** The namespace services create their resources in. */
  namespace: string;
  logger: Logger;
  config: ControllerSettings;
  /** Delay before a failed worker shard runs again (default: 1 s doubling up to 60 s). */
  retryDelayMs?: (failures: number) => number;
}

/** A process's control plane: what services get, and the controllers to start once they registered their workers. */
export interface ControlPlaneHandle {
  controlPlane: ServiceControlPlane;
  /** The controllers' metrics (reconciles, durations, errors, queue depth). */
  registry: client.Registry;
  /** Starts the controllers (call once every service has registered its workers). */
  startControllers(): Promise<void>;
  /**
   * Stops the controllers and aborts running workloads, waiting for their workers to return: call it before the
   * services close, since workers use what the services opened. Unfinished items run again after a restart.
   */
  stopWork(): Promise<void>;
  /** Stops everything still running (stopWork included) and closes the store. */
  close(): Promise<void>;
}

/**
 * The control plane of one embedded process: the resource store persisted under the data directory, the in-process
 * workload driver running the workers services register, and the controllers over both. Open it once per process.
 */
export async function openEmbeddedControlPlane(options: EmbeddedControlPlaneOptions): Promise<ControlPlaneHandle> {
  const { logger } = options;
  const store = await EmbeddedResourceStore.open({
    dir: path.join(options.dataDir, 'control-plane'),
    onWarning: (message, detail) => logger.warn(message, detail),
  });
  const driver = new EmbeddedWorkloadDriver({
    retryDelayMs: options.retryDelayMs,
    onShardError: (owner, index, error) =>
      logger.warn('worker shard failed', {
        resource: `${owner.kind} ${owner.namespace}/${owner.name}`,
        index,
        error: error instanceof Error ? error.message : String(error),
      }),
  });
  const registry = new client.Registry();
  let controllers: RunningControllers | undefined;
  const stopWork = async () => {
    await controllers?.stop();
    await driver.close();
  };
  return {
    controlPlane: {
      resources: store,
      namespace: options.namespace,
      registerWorker: (name, worker) => driver.register(name, worker),
    },
    registry,
    startControllers: async () => {
      if (controllers) throw new Error('the controllers are already started');
      controllers = await startControllers({ store, driver, config: options.config, logger, registry });
    },
    stopWork,
    close: async () => {
      await stopWork();
      await store.close();
    },
  };
}
