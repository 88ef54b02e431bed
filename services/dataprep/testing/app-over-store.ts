import path from 'node:path';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { listen } from '../../lib/http/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { ObjectStore } from '../../lib/storage/index.js';
import { createApp } from '../app.js';
import { loadDataprepConfig, type DataprepConfig } from '../config.js';
import { embedMedia } from '../pipeline/index.js';
import { openVectorStores } from '../runtime/open-runtime.js';
import { TelemetryLog } from '../ingest/telemetry.js';
import { TEST_LIMITS, testModels } from './harness.js';

const MIB = 1024 * 1024;

/**
 * The dataprep app over `store` with LanceDB and temp files under `dataDir`, the test models and a 64 MiB upload cap,
 * listening on 127.0.0.1:0. Unlike the harness, the caller chooses the logger and sees the app's metrics.
 */
export async function startDataprepOver(store: ObjectStore, dataDir: string, logger: Logger) {
  const models = await testModels();
  const config: DataprepConfig = loadDataprepConfig({
    ARGUS_DATA_DIR: dataDir,
    ARGUS_MODELS_DIR: await ensureDefaultModels(),
  });
  const {
    image: vectorStore,
    text: textVectorStore,
    descriptions: descriptionStore,
  } = await openVectorStores(config, models.imageEmbedder.dimension, models.textEmbedder.dimension);
  const pipelineDeps = {
    imageEmbedder: models.imageEmbedder,
    imageDescriptor: config.imageDescriptor,
    detector: models.detector,
    vectors: vectorStore,
    logger,
  };
  const created = createApp({
    config,
    logger,
    objectStore: store,
    vectorStore,
    textVectorStore,
    descriptionStore,
    models,
    embedMedia: (request) => embedMedia(pipelineDeps, request),
    telemetry: await TelemetryLog.open({ maxRecords: 20 }),
    limits: { ...TEST_LIMITS, uploadMaxBytes: 64 * MIB },
    tempDir: path.join(dataDir, 'tmp'),
  });
  const server = await listen(created.app, { port: 0, host: '127.0.0.1', logger, name: 'dataprep-test' });
  return {
    services: created.services,
    metrics: created.metrics,
    server,
    async close() {
      await server.close();
      await vectorStore.close();
      await textVectorStore.close();
      await descriptionStore.close();
    },
  };
}
