import { rm } from 'node:fs/promises';
import path from 'node:path';
import { loadModels } from '../../lib/inference/index.js';
import { importDefaultModels } from '../../lib/inference/import/index.js';
import type { Logger } from '../../lib/log/index.js';
import { createObjectStore } from '../../lib/storage/index.js';
import { openSharedState } from '../../lib/shared-state/index.js';
import { openVectorTable, type VectorStore } from '../../lib/vectors/index.js';
import type { DataprepConfig } from '../config.js';
import { embedMedia } from '../pipeline/index.js';
import type { DataprepDeps } from './services.js';
import { TelemetryLog } from '../ingest/telemetry.js';

/**
 * The image, summary and description vector stores `config` names, with the dimensions of the models that fill them.
 * Frame descriptions (search/) have the summaries' dimension but their own table/collection, named after the image
 * one: `<table>_descriptions` (LanceDB), `<collection>Descriptions` (Weaviate).
 */
export async function openVectorStores(
  config: DataprepConfig,
  imageDimension: number,
  textDimension: number,
  onIndexError?: (error: unknown) => void,
) {
  const v = config.vectors;
  const open = (table: string, dimension: number) => openVectorTable(v, table, dimension, onIndexError);
  const opened: VectorStore[] = [];
  try {
    const image = await open(v.backend === 'lancedb' ? v.table : v.collection, imageDimension);
    opened.push(image);
    const text = await open(v.backend === 'lancedb' ? v.textTable : v.textCollection, textDimension);
    opened.push(text);
    const descriptions = await open(
      v.backend === 'lancedb' ? `${v.table}_descriptions` : `${v.collection}Descriptions`,
      textDimension,
    );
    return { image, text, descriptions };
  } catch (error) {
    for (const store of opened) await store.close();
    throw error;
  }
}

/** What dataprep's code runs on, opened from its configuration, and how to release it. */
export interface DataprepRuntime {
  deps: Omit<DataprepDeps, 'controlPlane'>;
  close(): Promise<void>;
}

/**
 * Opens what the dataprep code needs from `config` (models imported on first use and loaded, object store, vector
 * stores, telemetry log, the pipeline): the HTTP service and the cluster's ingest worker run on the same.
 */
export async function openDataprepRuntime(config: DataprepConfig, logger: Logger): Promise<DataprepRuntime> {
  const { modelsDir, provider, threads, isolation } = config.platform;
  // Temp copies are per request or item; any left here were orphaned by a crash.
  await rm(path.join(config.dataDir, 'tmp'), { recursive: true, force: true });
  await importDefaultModels(modelsDir, { log: (message) => logger.info(message) });
  const models = await loadModels({ modelsDir, provider, threads, isolation, ...config.models });
  const cleanup: Array<() => Promise<void>> = [() => models.release()];
  // Every step runs even when an earlier one fails; the first failure is reported.
  const close = async () => {
    const failures: unknown[] = [];
    for (const step of [...cleanup].reverse()) await step().catch((error: unknown) => failures.push(error));
    if (failures.length > 0) throw failures[0];
  };
  try {
    if (config.preloadModels) await models.warmUp();
    const objectStore = createObjectStore(config.storage);
    cleanup.push(() => objectStore.close());
    const vectors = await openVectorStores(
      config,
      models.imageEmbedder.dimension,
      models.textEmbedder.dimension,
      (error) =>
        logger.warn('vector index maintenance failed; it is retried later', {
          error: (error as Error)?.message ?? String(error),
        }),
    );
    cleanup.push(
      () => vectors.image.close(),
      () => vectors.text.close(),
      () => vectors.descriptions.close(),
    );
    // With ARGUS_REDIS_URL, telemetry is shared by every replica and ingest worker (an unreachable Redis stops start-up).
    const redisUrl = config.platform.redisUrl;
    const shared = redisUrl
      ? await openSharedState(
          { backend: 'redis', url: redisUrl, namespace: 'argus:dataprep:', clientName: 'argus-dataprep' },
          (error) => logger.debug('shared state connection error', { error: error.message }),
        )
      : undefined;
    if (shared) cleanup.push(() => shared.close());
    const telemetry = await TelemetryLog.open({
      maxRecords: config.telemetryMaxRecords,
      file: path.join(config.dataDir, 'telemetry.jsonl'),
      shared,
      onSharedAvailability: (available, error) =>
        available
          ? logger.info('shared telemetry reachable again')
          : logger.warn(
              "shared telemetry unreachable: GET /telemetry answers this replica's records until it is back",
              {
                error: (error as Error | undefined)?.message,
              },
            ),
    });
    cleanup.push(() => telemetry.flush());
    const pipelineDeps = {
      imageEmbedder: models.imageEmbedder,
      imageDescriptor: config.imageDescriptor,
      detector: models.detector,
      vectors: vectors.image,
      descriptions: { textEmbedder: models.textEmbedder, store: vectors.descriptions },
      logger,
    };
    return {
      deps: {
        config,
        logger,
        objectStore,
        vectorStore: vectors.image,
        textVectorStore: vectors.text,
        descriptionStore: vectors.descriptions,
        models,
        embedMedia: (request) => embedMedia(pipelineDeps, request),
        telemetry,
      },
      close,
    };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}
