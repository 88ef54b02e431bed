import { CAPTION_RUN_WORKER } from '../../operator/api/index.js';
import type { ServiceControlPlane } from '../../operator/ports/index.js';
import { listen, type StopOptions } from '../lib/http/index.js';
import { createLogger, type Logger } from '../lib/log/index.js';
import { createApp } from './app.js';
import { loadCaptionRunsConfig, type CaptionRunsConfig } from './config.js';
import { MetricsSocket } from './metrics/metrics-socket.js';
import { RunMetrics } from './metrics/run-metrics.js';
import { startEmbeddedBroker } from './relay/embedded-broker.js';
import { SYSTEM_TIMERS } from './relay/metadata-relay.js';
import { MetadataRelay } from './relay/metadata-relay.js';
import { connectRelay } from './relay/mqtt-relay-source.js';
import type { OutputCounters } from './worker/outputs.js';
import { openWorkerRuntime } from './worker/worker-runtime.js';

/** A running caption-runs service. */
export interface RunningCaptionRuns {
  url: string;
  /** Where captions are published (MQTT_BROKER, or the embedded broker's address). */
  brokerUrl: string;
  /**
   * Stops accepting and ends open requests, then closes the worker's MQTT connection and detector sessions and the
   * embedded broker. The runs go on after a restart (they are resources); their workers are stopped by the control
   * plane before the services close.
   */
  close(options?: StopOptions): Promise<void>;
}

/** Starts caption-runs from `env`: validates the configuration (ConfigError), then as startCaptionRunsFrom. */
export async function startCaptionRuns(
  env: NodeJS.ProcessEnv,
  controlPlane: ServiceControlPlane,
  logger?: Logger,
): Promise<RunningCaptionRuns> {
  return startCaptionRunsFrom(loadCaptionRunsConfig(env), controlPlane, logger);
}

/**
 * Starts the service from its validated configuration: runs are CaptionRun resources in `controlPlane`'s store
 * (embedded: persisted under the data dir, so they survive a restart); the embedded MQTT broker when MQTT_BROKER is
 * unset; the caption worker registered as CAPTION_RUN_WORKER; listens on CAPTION_RUNS_HOST:CAPTION_RUNS_PORT.
 */
export async function startCaptionRunsFrom(
  config: CaptionRunsConfig,
  controlPlane: ServiceControlPlane,
  logger?: Logger,
): Promise<RunningCaptionRuns> {
  const { platform } = config;
  const log = logger ?? createLogger({ service: 'caption-runs', level: platform.logLevel, json: platform.logJson });
  const cleanup: Array<() => Promise<void>> = [];
  const release = async () => {
    for (const step of [...cleanup].reverse()) await step().catch(() => undefined);
  };
  try {
    let brokerUrl = config.mqttBroker;
    if (!brokerUrl) {
      const broker = await startEmbeddedBroker(config.embeddedBroker.host, config.embeddedBroker.port);
      cleanup.push(() => broker.close());
      brokerUrl = broker.url;
    }
    const relay = new MetadataRelay(config.relay);
    const source = connectRelay(brokerUrl, relay, log, `argus-caption-runs-relay-${process.pid}-${Date.now()}`);
    cleanup.push(() => source.close());
    cleanup.push(async () => relay.close());
    const { app, metrics } = createApp({
      logger: log,
      controlPlane,
      relay,
      config: { ...config, modelsDir: platform.modelsDir },
    });
    // The worker's figures: on /metrics, and every second on the metrics WebSocket.
    const counters: OutputCounters = { embeddingsPosted: 0, embeddingFailures: 0, alertsRaised: 0, alertFailures: 0 };
    const runMetrics = new RunMetrics(metrics.registry, Date.now, { relay, outputs: counters });
    const runtime = openWorkerRuntime(config, controlPlane.resources, log, brokerUrl, {
      onCaption: (event) => runMetrics.caption(event),
      onReconnect: (runId) => runMetrics.reconnect(runId),
      counters,
    });
    cleanup.push(() => runtime.close());
    const socket = new MetricsSocket(runMetrics, {
      intervalMs: config.metricsIntervalMs,
      maxClients: 64,
      timers: SYSTEM_TIMERS,
    });
    cleanup.push(async () => socket.close());
    controlPlane.registerWorker(CAPTION_RUN_WORKER, runtime.worker);
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
      mqtt: config.mqttBroker ? 'external' : `embedded (${brokerUrl})`,
      vlm: config.vlm?.model ?? null,
      caption_qa: config.captionQaUrl ?? null,
      alert_dispatch: config.alertsUrl ?? null,
      media_root: config.mediaRoot ?? null,
      rtsp_allow: config.rtspAllow?.entries ?? null,
    });
    let closing: Promise<void> | undefined;
    return {
      url: server.url,
      brokerUrl,
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
