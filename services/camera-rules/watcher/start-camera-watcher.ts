import type { ResourceStore, Worker } from '../../../operator/ports/index.js';
import { createLogger, type Logger } from '../../lib/log/index.js';
import { realSleep } from '../actions/retry.js';
import { loadCameraRulesConfig } from '../config.js';
import { openRuntime, type CameraRulesRuntime } from '../runtime/runtime.js';
import { cameraWatcherWorker } from './camera-watcher.js';

/** The camera-watcher worker over one runtime (the service's own embedded, a worker process's in the cluster). */
export function watcherOf(
  runtime: CameraRulesRuntime,
  resources: ResourceStore,
  pollMs: number,
  logger: Logger,
): Worker {
  return cameraWatcherWorker({
    resources,
    recorder: runtime.recorder,
    feed: runtime.feed,
    handler: runtime.handler,
    notes: runtime.notes,
    recordings: runtime.recordings,
    logger,
    pollMs,
    sleep: realSleep,
  });
}

/**
 * Builds the camera-watcher worker from the environment (the same CAMERA_RULES_*, MQTT_BROKER and VLM_* settings as
 * the service) over `resources` — what `argus worker camera-watcher` runs in a cluster pod with the kubernetes
 * ResourceStore, the shape of bin/argus.ts's WorkerStarter. Starts Frigate's MQTT feed; no HTTP server.
 */
export async function startCameraWatcherWorker(
  env: NodeJS.ProcessEnv,
  resources: ResourceStore,
  logger?: Logger,
): Promise<{ worker: Worker; close(): Promise<void> }> {
  const config = loadCameraRulesConfig(env);
  const log =
    logger ??
    createLogger({ service: 'camera-watcher', level: config.platform.logLevel, json: config.platform.logJson });
  // The worker's namespace comes from its resource; the runtime's rules are read there too, matched from a rule cache
  // (the store's watch of CameraRules: CAMERA_WATCHER_WORKER_RULES grants list and watch).
  const runtime = openRuntime(
    config,
    { resources, namespace: config.platform.namespace, registerWorker: () => undefined },
    log,
  );
  runtime.feed?.start();
  return { worker: watcherOf(runtime, resources, config.watcherPollMs, log), close: () => runtime.close() };
}
