import type { ResourceStore } from '../../../operator/ports/index.js';
import { ConfigError } from '../../lib/config/index.js';
import type { Logger } from '../../lib/log/index.js';
import { loadCaptionRunsConfig } from '../config.js';
import { openCredentialSealer } from '../runs/stream-credentials.js';
import { openWorkerRuntime, type WorkerRuntime } from './worker-runtime.js';

/**
 * The caption worker of `argus worker caption-run` (a pod of the run's Deployment): the service's settings from
 * `env`; MQTT_BROKER is required there (an embedded broker in a worker pod would reach nobody).
 */
export async function startCaptionWorker(
  env: NodeJS.ProcessEnv,
  resources: ResourceStore,
  logger: Logger,
): Promise<WorkerRuntime> {
  const config = loadCaptionRunsConfig(env);
  if (!config.mqttBroker) {
    throw new ConfigError('caption-runs', ['MQTT_BROKER is required by the caption worker outside argus up']);
  }
  // The key the service sealed passwords with (CAPTION_RUNS_CREDENTIALS_KEY); a worker never makes one of its own.
  const credentials = await openCredentialSealer({
    secret: config.credentialsKey,
    dataDir: config.platform.dataDir,
    create: false,
  });
  return openWorkerRuntime(config, resources, logger, config.mqttBroker, credentials);
}
