import type { ResourceStore, Worker } from '../../../operator/ports/index.js';
import { loadModels, type Detector, type LoadedModels } from '../../lib/inference/index.js';
import { ChatCompletionsClient } from '../../lib/llm/index.js';
import type { Logger } from '../../lib/log/index.js';
import { bundledFfmpegPaths } from '../../lib/media/index.js';
import type { CaptionRunsConfig } from '../config.js';
import type { CredentialSealer } from '../runs/stream-credentials.js';
import { captionRunWorker, type WorkerTiming } from './caption-worker.js';
import { mqttCaptionPublisher } from './mqtt-publisher.js';

/** The caption worker with what it opened (MQTT connection, detector sessions), and the way to release them. */
export interface WorkerRuntime {
  worker: Worker;
  close(): Promise<void>;
}

/** The worker's pacing from the configuration: back-off 1 s doubling up to CAPTION_RUNS_RECONNECT_MAX_SECONDS. */
export function workerTiming(stream: CaptionRunsConfig['stream']): WorkerTiming {
  return {
    ioTimeoutMs: stream.ioTimeoutMs,
    idleTimeoutMs: stream.idleTimeoutMs,
    backoffMs: (attempt) => Math.min(stream.reconnectMaxMs, 1000 * 2 ** Math.max(0, attempt - 1)),
    startAttempts: stream.startAttempts,
    statusIntervalMs: stream.statusIntervalMs,
  };
}

/**
 * Builds the caption worker from the service's configuration: one MQTT connection to `brokerUrl` for every run of
 * this process (captions and the runs' metrics reports), detector sessions loaded on first use and shared by runs, a
 * VLM client per model name.
 */
export function openWorkerRuntime(
  config: CaptionRunsConfig,
  resources: ResourceStore,
  logger: Logger,
  brokerUrl: string,
  credentials: CredentialSealer | undefined,
): WorkerRuntime {
  const { platform } = config;
  const { apiKeys } = platform;
  const publisher = mqttCaptionPublisher(brokerUrl, logger, `argus-caption-runs-${process.pid}-${Date.now()}`);
  const detectors = new Map<string, Promise<LoadedModels<'detector'>>>();
  const detector = async (name: string): Promise<Detector> => {
    let loading = detectors.get(name);
    if (!loading) {
      loading = loadModels({ ...platform, roles: ['detector'] as const, detector: name });
      detectors.set(name, loading);
      loading.catch(() => detectors.delete(name));
    }
    return (await loading).detector;
  };
  const vlm = config.vlm;
  const worker = captionRunWorker({
    resources,
    logger,
    ffmpegPath: bundledFfmpegPaths().ffmpeg,
    detector,
    vlm: vlm
      ? (model) =>
          new ChatCompletionsClient({ baseUrl: vlm.baseUrl, model, apiKey: vlm.apiKey, timeoutMs: vlm.timeoutMs })
      : undefined,
    vlmSettings: { temperature: vlm?.temperature ?? 0, imageMaxSide: vlm?.imageMaxSide ?? 512 },
    publisher,
    captionQa: config.captionQaUrl
      ? { url: `${config.captionQaUrl}/embeddings`, timeoutMs: config.postTimeoutMs, apiKeys }
      : undefined,
    alerts: config.alertsUrl
      ? { url: `${config.alertsUrl}/alerts`, timeoutMs: config.postTimeoutMs, apiKeys }
      : undefined,
    mediaRoot: config.mediaRoot,
    credentials,
    rtspAllow: config.rtspAllow,
    timing: workerTiming(config.stream),
  });
  return {
    worker,
    close: async () => {
      await publisher.close();
      for (const loading of detectors.values()) await (await loading.catch(() => undefined))?.release();
    },
  };
}
