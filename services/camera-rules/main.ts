import { CAMERA_WATCHER_WORKER } from '../../operator/api/index.js';
import type { ServiceControlPlane } from '../../operator/ports/index.js';
import { listen, type StopOptions } from '../lib/http/index.js';
import { createLogger, type Logger } from '../lib/log/index.js';
import { createApp } from './app.js';
import type { CameraRulesConfig } from './config.js';
import { httpProbe } from './health/reachability.js';
import { openRuntime } from './runtime/runtime.js';
import { watcherOf } from './watcher/start-camera-watcher.js';
import { WatcherBook } from './watchers/watcher-book.js';

/** A running camera-rules service. */
export interface RunningCameraRules {
  url: string;
  /** Stops accepting, ends in-flight requests, then disconnects from the recorder and its broker. */
  close(options?: StopOptions): Promise<void>;
}

/**
 * Starts the service from its validated configuration: the recorder adapter the configuration names (Frigate when
 * CAMERA_RULES_FRIGATE_URL is set, else the recordings directory), the rules in the control plane's store, health
 * probes of dataprep and alert-dispatch, then listens on CAMERA_RULES_HOST:CAMERA_RULES_PORT.
 */
export async function startCameraRules(
  config: CameraRulesConfig,
  controlPlane: ServiceControlPlane,
  logger?: Logger,
): Promise<RunningCameraRules> {
  const { platform } = config;
  const log = logger ?? createLogger({ service: 'camera-rules', level: platform.logLevel, json: platform.logJson });
  const runtime = openRuntime(config, controlPlane, log);
  const { recorder, feed } = runtime;
  feed?.start();
  // Embedded, the CameraWatcher controller runs this worker in this process; in the cluster registration does nothing
  // (the worker runs in its own pod: `argus worker camera-watcher`, startCameraWatcherWorker).
  controlPlane.registerWorker(
    CAMERA_WATCHER_WORKER,
    watcherOf(runtime, controlPlane.resources, config.watcherPollMs, log),
  );
  try {
    const search = httpProbe(`${config.dataprepUrl}/health`, config.serviceTimeoutMs);
    const { app } = createApp({
      logger: log,
      recorder,
      rules: runtime.rules,
      watchers: new WatcherBook(controlPlane.resources, controlPlane.namespace, log),
      search,
      alerts: httpProbe(`${config.alertDispatchUrl}/health`, config.serviceTimeoutMs),
      broker: feed ? async () => feed.reachability() : undefined,
    });
    const server = await listen(app, {
      port: config.port,
      host: config.host,
      logger: log,
      name: 'camera-rules',
      graceMs: platform.shutdownGraceMs,
      apiKeys: platform.apiKeys,
    });
    log.info('camera rules ready', {
      url: server.url,
      recorder: recorder.kind,
      summaries: runtime.summarizer.kind,
      namespace: controlPlane.namespace,
    });
    let closing: Promise<void> | undefined;
    return {
      url: server.url,
      close: (options) =>
        (closing ??= (async () => {
          await server.close(options);
          await runtime.close();
        })()),
    };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}
