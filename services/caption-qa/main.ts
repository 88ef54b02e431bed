import { listen, type StopOptions } from '../lib/http/index.js';
import { defaultModels, importDefaultModels } from '../lib/inference/import/index.js';
import { DEFAULT_MODEL_NAMES, loadModels } from '../lib/inference/index.js';
import { ChatCompletionsClient } from '../lib/llm/index.js';
import { createLogger, type Logger } from '../lib/log/index.js';
import { openSharedState } from '../lib/shared-state/index.js';
import { createObjectStore } from '../lib/storage/index.js';
import { openVectorTable, type VectorStore } from '../lib/vectors/index.js';
import { createApp } from './app.js';
import type { CaptionQaConfig, CaptionQaVectorConfig } from './config.js';
import { KeptFrames } from './frames/kept-frames.js';
import { RetentionSweeper } from './frames/retention.js';
import { SourceRegistry } from './sources/known-sources.js';

/** A running caption-qa service. */
export interface RunningCaptionQa {
  url: string;
  /** Stops accepting, ends open answer streams (their model calls cancelled), then releases stores and models. */
  close(options?: StopOptions): Promise<void>;
}

/** The model roles caption-qa loads. */
const ROLES = ['imageEmbedder', 'textEmbedder'] as const;

function openVectors(
  config: CaptionQaVectorConfig,
  table: string,
  dimension: number,
  log: Logger,
): Promise<VectorStore> {
  const onIndexError = (error: unknown) =>
    log.warn('vector index maintenance failed; it is retried later', {
      table,
      error: (error as Error)?.message ?? String(error),
    });
  return openVectorTable(config, table, dimension, onIndexError);
}

/**
 * Starts caption-qa from its validated configuration: imports the two embedders on first use, opens the frame store,
 * the caption and frame vector collections and the source registry, starts frame retention, listens on
 * CAPTION_QA_HOST:CAPTION_QA_PORT.
 */
export async function startCaptionQa(config: CaptionQaConfig, logger?: Logger): Promise<RunningCaptionQa> {
  const { platform } = config;
  const log = logger ?? createLogger({ service: 'caption-qa', level: platform.logLevel, json: platform.logJson });
  const wanted: string[] = [DEFAULT_MODEL_NAMES.imageEmbedder, DEFAULT_MODEL_NAMES.textEmbedder];
  await importDefaultModels(platform.modelsDir, {
    models: defaultModels.filter((model) => wanted.includes(model.name)),
    log: (message) => log.info(message),
  });
  const models = await loadModels({ ...platform, roles: ROLES, ...config.models });
  const cleanup: Array<() => Promise<void>> = [() => models.release()];
  const release = async () => {
    for (const step of [...cleanup].reverse()) await step().catch(() => undefined);
  };
  try {
    if (config.preloadModels) await models.warmUp();
    const objectStore = createObjectStore(config.storage);
    cleanup.push(() => objectStore.close());
    const captions = await openVectors(config.vectors, config.vectors.captionTable, models.textEmbedder.dimension, log);
    cleanup.push(() => captions.close());
    const frames = await openVectors(config.vectors, config.vectors.frameTable, models.imageEmbedder.dimension, log);
    cleanup.push(() => frames.close());
    const keptFrames = new KeptFrames(objectStore, config.bucket);
    // With ARGUS_REDIS_URL, camera and run names are shared by every replica (an unreachable Redis stops start-up).
    const redisUrl = platform.redisUrl;
    const shared = redisUrl
      ? await openSharedState(
          { backend: 'redis', url: redisUrl, namespace: 'argus:caption-qa:', clientName: 'argus-caption-qa' },
          (error) => log.debug('shared state connection error', { error: error.message }),
        )
      : undefined;
    if (shared) cleanup.push(() => shared.close());
    const sources = new SourceRegistry(objectStore, config.bucket, shared);
    await sources.load();
    const sweeper = new RetentionSweeper({
      keptFrames,
      frames,
      sources,
      limits: { maxCount: config.retention.maxCount, maxAgeMs: config.retention.maxAgeMs },
      logger: log,
      clock: Date.now,
    });
    sweeper.start(config.retention.sweepIntervalMs);
    cleanup.push(() => sweeper.stop());
    const model = config.llm ? new ChatCompletionsClient(config.llm) : undefined;
    const { app } = createApp({
      logger: log,
      textEmbedder: models.textEmbedder,
      imageEmbedder: models.imageEmbedder,
      captions,
      frames,
      keptFrames,
      sources,
      model,
      config,
    });
    const server = await listen(app, {
      port: config.port,
      host: config.host,
      logger: log,
      name: 'caption-qa',
      graceMs: platform.shutdownGraceMs,
      apiKeys: platform.apiKeys,
    });
    log.info('caption qa ready', {
      url: server.url,
      vector_store: captions.backend,
      frame_store: objectStore.backend,
      llm: config.llm?.model ?? null,
      time_zone: config.retrieval.timeZone,
    });
    let closing: Promise<void> | undefined;
    return {
      url: server.url,
      close: (options) =>
        (closing ??= (async () => {
          await server.close(options);
          await release();
        })()),
    };
  } catch (error) {
    await release();
    throw error;
  }
}
