import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { ServiceControlPlane } from '../../operator/ports/index.js';
import { listen, type StopOptions } from '../lib/http/index.js';
import { loadModels } from '../lib/inference/index.js';
import { importDefaultModels } from '../lib/inference/import/index.js';
import { createLogger, type Logger } from '../lib/log/index.js';
import { createObjectStore, type ObjectStore } from '../lib/storage/index.js';
import { createVectorStore, type VectorStore } from '../lib/vectors/index.js';
import { createApp } from './app.js';
import { loadDataprepConfig, type DataprepConfig } from './config.js';
import { embedMedia } from './pipeline/index.js';
import { TelemetryLog } from './telemetry.js';

/** A running dataprep service. */
export interface StartedDataprep {
  url: string;
  /**
   * Stops accepting, aborts in-flight uploads and processing, waits (until `deadline`, default the configured grace
   * from now) for their rollbacks, then releases storage, vector stores and models.
   */
  close(options?: StopOptions): Promise<void>;
}

function openObjectStore(config: DataprepConfig): ObjectStore {
  return createObjectStore(config.storage);
}

async function openVectorStores(config: DataprepConfig, imageDimension: number, textDimension: number) {
  const v = config.vectors;
  const open = (table: string, dimension: number): Promise<VectorStore> =>
    v.backend === 'lancedb'
      ? createVectorStore({ backend: 'lancedb', dir: v.dir, table, dimension })
      : createVectorStore({
          backend: 'weaviate',
          url: v.url,
          grpcUrl: v.grpcUrl,
          apiKey: v.apiKey,
          collection: table,
          dimension,
        });
  const image = await open(v.backend === 'lancedb' ? v.table : v.collection, imageDimension);
  try {
    const text = await open(v.backend === 'lancedb' ? v.textTable : v.textCollection, textDimension);
    return { image, text };
  } catch (error) {
    await image.close();
    throw error;
  }
}

/**
 * Starts the dataprep service from `env`: validates the configuration, imports the default models on first use,
 * opens storage and the vector stores, and listens on MM_DATAPREP_HOST:MM_DATAPREP_HOST_PORT.
 */
export async function startDataprep(
  env: NodeJS.ProcessEnv,
  logger?: Logger,
  _controlPlane?: ServiceControlPlane,
): Promise<StartedDataprep> {
  const config = loadDataprepConfig(env);
  const log =
    logger ?? createLogger({ service: 'dataprep', level: config.platform.logLevel, json: config.platform.logJson });
  const { modelsDir, provider, threads, isolation } = config.platform;
  // Temp copies are per request; any left here were orphaned by a crash.
  await rm(path.join(config.dataDir, 'tmp'), { recursive: true, force: true });
  await importDefaultModels(modelsDir, { log: (message) => log.info(message) });
  const models = await loadModels({ modelsDir, provider, threads, isolation, ...config.models });
  const cleanup: Array<() => Promise<void>> = [() => models.release()];
  try {
    if (config.preloadModels) await models.warmUp(['imageEmbedder', 'textEmbedder', 'detector']);
    const objectStore = openObjectStore(config);
    cleanup.push(() => objectStore.close());
    const vectors = await openVectorStores(config, models.imageEmbedder.dimension, models.textEmbedder.dimension);
    cleanup.push(
      () => vectors.image.close(),
      () => vectors.text.close(),
    );
    const telemetry = await TelemetryLog.open({
      maxRecords: config.telemetryMaxRecords,
      file: path.join(config.dataDir, 'telemetry.jsonl'),
    });
    cleanup.push(() => telemetry.flush());
    const pipelineDeps = {
      imageEmbedder: models.imageEmbedder,
      detector: models.detector,
      vectors: vectors.image,
      logger: log,
    };
    const { app } = createApp({
      config,
      logger: log,
      objectStore,
      vectorStore: vectors.image,
      textVectorStore: vectors.text,
      models,
      embedMedia: (request) => embedMedia(pipelineDeps, request),
      telemetry,
    });
    const server = await listen(app, {
      port: config.port,
      host: config.host,
      logger: log,
      name: 'dataprep',
      graceMs: config.platform.shutdownGraceMs,
    });
    return {
      url: server.url,
      close: async (options) => {
        // Handlers have returned (their rollbacks done) before anything they use is released.
        await server.close(options);
        const failures: unknown[] = [];
        for (const step of [...cleanup].reverse()) await step().catch((error: unknown) => failures.push(error));
        if (failures.length > 0) throw failures[0];
      },
    };
  } catch (error) {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    throw error;
  }
}
