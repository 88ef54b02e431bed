import { CAPTION_RUN_WORKER } from '../../operator/api/index.js';
import type { ServiceControlPlane } from '../../operator/ports/index.js';
import { listen, type StopOptions } from '../lib/http/index.js';
import { createLogger, type Logger } from '../lib/log/index.js';
import { shownBrokerUrl } from '../lib/mqtt/index.js';
import { openSharedState } from '../lib/shared-state/index.js';
import { createApp } from './app.js';
import { loadCaptionRunsConfig, type CaptionRunsConfig } from './config.js';
import { MetricsSocket } from './metrics/metrics-socket.js';
import { RunMetrics } from './metrics/run-metrics.js';
import { SYSTEM_TIMERS } from './relay/metadata-relay.js';
import { MetadataRelay } from './relay/metadata-relay.js';
import { connectRelay } from './relay/mqtt-relay-source.js';
import { openCredentialSealer } from './runs/stream-credentials.js';
import { openWorkerRuntime } from './worker/worker-runtime.js';

/** A running caption-runs service. */
export interface RunningCaptionRuns {
  url: string;
  /**
   * Stops accepting and ends open requests, then closes the relay's and the worker's MQTT connections and the
   * detector sessions. The runs go on after a restart (they are resources); their workers are stopped by the control
   * plane before the services close.
   */
  close(options?: StopOptions): Promise<void>;
}

/** Starts caption-runs from `env`: validates the configuration (ConfigError), then as startCaptionRunsFrom. */
export async function startCaptionRuns(
  env: NodeJS.ProcessEnv,
  controlPlane: ServiceControlPlane,
  mqttBroker: string | undefined,
  logger?: Logger,
): Promise<RunningCaptionRuns> {
  return startCaptionRunsFrom(loadCaptionRunsConfig(env), controlPlane, mqttBroker, logger);
}

/**
 * Starts the service from its validated configuration: runs are CaptionRun resources in `controlPlane`'s store
 * (embedded: persisted under the data dir, so they survive a restart); captions and the workers' reports are read
 * from `mqttBroker` (the process's broker: MQTT_BROKER, or the one `argus up` embeds), where the caption worker,
 * registered as CAPTION_RUN_WORKER, publishes; listens on CAPTION_RUNS_HOST:CAPTION_RUNS_PORT.
 */
export async function startCaptionRunsFrom(
  config: CaptionRunsConfig,
  controlPlane: ServiceControlPlane,
  mqttBroker: string | undefined,
  logger?: Logger,
): Promise<RunningCaptionRuns> {
  const { platform } = config;
  const log = logger ?? createLogger({ service: 'caption-runs', level: platform.logLevel, json: platform.logJson });
  const cleanup: Array<() => Promise<void>> = [];
  const release = async () => {
    for (const step of [...cleanup].reverse()) await step().catch(() => undefined);
  };
  try {
    // With ARGUS_REDIS_URL, starts claim their stream across replicas (an unreachable Redis stops start-up).
    const redisUrl = platform.redisUrl;
    const sharedState = redisUrl
      ? await openSharedState(
          { backend: 'redis', url: redisUrl, namespace: 'argus:caption-runs:', clientName: 'argus-caption-runs' },
          (error) => log.debug('shared state connection error', { error: error.message }),
        )
      : undefined;
    if (sharedState) cleanup.push(() => sharedState.close());
    // Embedded, the key file under the data dir is made on first start; in the cluster the key must be configured.
    const credentials = await openCredentialSealer({
      secret: config.credentialsKey,
      dataDir: platform.dataDir,
      create: platform.controlPlane === 'embedded',
    });
    const relay = new MetadataRelay(config.relay);
    cleanup.push(async () => relay.close());
    const { app, metrics } = createApp({
      logger: log,
      controlPlane,
      relay,
      sharedState,
      credentials,
      canPublish: mqttBroker !== undefined,
      config: { ...config, modelsDir: platform.modelsDir },
    });
    // Every run's figures, from its worker's reports on MQTT wherever it runs: on /metrics and the metrics WebSocket.
    const runMetrics = new RunMetrics(metrics.registry, Date.now, relay);
    if (mqttBroker) {
      const clientId = `argus-caption-runs-relay-${process.pid}-${Date.now()}`;
      const source = connectRelay(mqttBroker, relay, log, clientId, runMetrics);
      cleanup.push(() => source.close());
      const runtime = openWorkerRuntime(config, controlPlane.resources, log, mqttBroker, credentials);
      cleanup.push(() => runtime.close());
      controlPlane.registerWorker(CAPTION_RUN_WORKER, runtime.worker);
    } else {
      // Only in the cluster (embedded, argus always gives one): its workers run in pods that need MQTT_BROKER too.
      log.warn('no MQTT broker (MQTT_BROKER): starts are refused, the metadata stream carries status only');
    }
    const socket = new MetricsSocket(runMetrics, {
      intervalMs: config.metricsIntervalMs,
      maxClients: 64,
      timers: SYSTEM_TIMERS,
    });
    cleanup.push(async () => socket.close());
    const server = await listen(app, {
      port: config.port,
      host: config.host,
      logger: log,
      name: 'caption-runs',
      graceMs: platform.shutdownGraceMs,
      apiKeys: platform.apiKeys,
    });
    socket.attach(server.server);
    log.info('caption runs ready', {
      url: server.url,
      mqtt: mqttBroker ? shownBrokerUrl(mqttBroker) : null,
      vlm: config.vlm?.model ?? null,
      caption_qa: config.captionQaUrl ?? null,
      alert_dispatch: config.alertsUrl ?? null,
      media_root: config.mediaRoot ?? null,
      rtsp_allow: config.rtspAllow?.entries ?? null,
      shared_state: sharedState?.backend ?? 'memory',
      stream_passwords: credentials ? 'sealed' : 'refused (no CAPTION_RUNS_CREDENTIALS_KEY)',
    });
    let closing: Promise<void> | undefined;
    return {
      url: server.url,
      close: (options) =>
        (closing ??= (async () => {
          socket.close();
          await server.close(options);
          await release();
        })()),
    };
  } catch (error) {
    await release();
    throw error;
  }
}
