import type { ServiceControlPlane } from '../../operator/ports/index.js';
import { listen, type StopOptions } from '../lib/http/index.js';
import { createLogger, type Logger } from '../lib/log/index.js';
import { createApp } from './app.js';
import { loadCaptionRunsConfig, type CaptionRunsConfig } from './config.js';

/** A running caption-runs service. */
export interface RunningCaptionRuns {
  url: string;
  /** Stops accepting and ends open requests; the runs go on (they are resources, their workers the control plane's). */
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
 * (embedded: persisted under the data dir, so they survive a restart); listens on CAPTION_RUNS_HOST:CAPTION_RUNS_PORT.
 */
export async function startCaptionRunsFrom(
  config: CaptionRunsConfig,
  controlPlane: ServiceControlPlane,
  logger?: Logger,
): Promise<RunningCaptionRuns> {
  const { platform } = config;
  const log = logger ?? createLogger({ service: 'caption-runs', level: platform.logLevel, json: platform.logJson });
  const { app } = createApp({
    logger: log,
    controlPlane,
    config: { ...config, modelsDir: platform.modelsDir },
  });
  const server = await listen(app, {
    port: config.port,
    host: config.host,
    logger: log,
    name: 'caption-runs',
    graceMs: platform.shutdownGraceMs,
  });
  log.info('caption runs ready', {
    url: server.url,
    vlm: config.vlm?.model ?? null,
    media_root: config.mediaRoot ?? null,
    rtsp_allow: config.rtspAllow?.entries ?? null,
  });
  let closing: Promise<void> | undefined;
  return { url: server.url, close: (options) => (closing ??= server.close(options)) };
}
