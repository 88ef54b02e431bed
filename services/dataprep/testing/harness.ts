import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { listen, type RunningServer } from '../../lib/http/index.js';
import { loadModels, type LoadedModels } from '../../lib/inference/index.js';
import { createLogger } from '../../lib/log/index.js';
import type { ObjectStore } from '../../lib/storage/index.js';
import type { VectorStore } from '../../lib/vectors/index.js';
import { createApp } from '../app.js';
import { DATAPREP_MODEL_ROLES, loadDataprepConfig, type DataprepConfig } from '../config.js';
import { embedMedia } from '../pipeline/index.js';
import { openVectorStores } from '../runtime/open-runtime.js';
import type { DataprepLimits, DataprepServices } from '../runtime/services.js';
import { TelemetryLog } from '../ingest/telemetry.js';

/** A storage backend the route suite runs against. */
export interface StorageBackendFixture {
  name: string;
  /** Opens the working store (fresh, empty). */
  open(): Promise<ObjectStore>;
  /** A store of the same kind whose backend cannot be reached (for 502 answers). */
  broken(): Promise<ObjectStore>;
  /** Whether reads (list, delete) of the broken store fail too, not only writes. */
  readsFailWhenBroken: boolean;
  stop(): Promise<void>;
}

type DataprepModelRole = (typeof DATAPREP_MODEL_ROLES)[number];

/** Models loaded once per test file. */
let models: Promise<LoadedModels<DataprepModelRole>> | undefined;

/** The default models of dataprep's roles, imported if needed, with their sessions created. */
export function testModels(): Promise<LoadedModels<DataprepModelRole>> {
  models ??= (async () => {
    const modelsDir = await ensureDefaultModels();
    const loaded = await loadModels({ modelsDir, provider: 'cpu', threads: 1, roles: DATAPREP_MODEL_ROLES });
    await loaded.warmUp();
    return loaded;
  })();
  return models;
}

/** Small limits so the tests never move hundreds of MB. */
export const TEST_LIMITS: DataprepLimits = {
  uploadMaxBytes: 1024 * 1024,
  ingestMaxBytes: 512 * 1024,
  urlTimeoutMs: 1500,
  urlMaxRedirects: 2,
};

/** A running dataprep app over real stores, and what the tests inspect. */
export interface Harness {
  url: string;
  base: string;
  config: DataprepConfig;
  services: DataprepServices;
  vectorStore: VectorStore;
  textVectorStore: VectorStore;
  descriptionStore: VectorStore;
  objectStore: ObjectStore;
  /** Another app over the same stores with different settings or stores. */
  variant(options: VariantOptions): Promise<RunningServer>;
  close(): Promise<void>;
}

/** What a variant app changes. */
export interface VariantOptions {
  env?: Record<string, string>;
  objectStore?: ObjectStore;
  vectorStore?: VectorStore;
}

const logger = createLogger({ service: 'dataprep-test', level: 'error', json: true });
// The suite provokes unexpected failures on purpose (500 answers); their log lines would only be noise.
logger.silent = true;

/** Starts the dataprep app on 127.0.0.1:0 with LanceDB in a temp dir and the given object store. */
export async function startHarness(objectStore: ObjectStore): Promise<Harness> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'dataprep-test-'));
  const loaded = await testModels();
  const baseEnv = {
    ARGUS_DATA_DIR: dataDir,
    ARGUS_MODELS_DIR: await ensureDefaultModels(),
    MM_DATAPREP_TELEMETRY_MAX_RECORDS: '20',
    // The image servers of the URL tests listen on loopback, refused unless allow-listed.
    MM_DATAPREP_IMAGE_URL_ALLOW: '127.0.0.1/32',
  };
  const config = loadDataprepConfig(baseEnv);
  const {
    image: vectorStore,
    text: textVectorStore,
    descriptions: descriptionStore,
  } = await openVectorStores(config, loaded.imageEmbedder.dimension, loaded.textEmbedder.dimension);
  const servers: RunningServer[] = [];
  const build = async (cfg: DataprepConfig, store: ObjectStore, vectorsStore: VectorStore) => {
    const telemetry = await TelemetryLog.open({ maxRecords: cfg.telemetryMaxRecords });
    const pipelineDeps = {
      imageEmbedder: loaded.imageEmbedder,
      imageDescriptor: cfg.imageDescriptor,
      detector: loaded.detector,
      vectors: vectorsStore,
      descriptions: { textEmbedder: loaded.textEmbedder, store: descriptionStore },
      logger,
    };
    const created = createApp({
      config: cfg,
      logger,
      objectStore: store,
      vectorStore: vectorsStore,
      textVectorStore,
      descriptionStore,
      models: loaded,
      embedMedia: (request) => embedMedia(pipelineDeps, request),
      telemetry,
      limits: TEST_LIMITS,
    });
    const server = await listen(created.app, { port: 0, host: '127.0.0.1', logger, name: 'dataprep-test' });
    servers.push(server);
    return { server, services: created.services };
  };
  const main = await build(config, objectStore, vectorStore);
  return {
    url: main.server.url,
    base: `${main.server.url}/v1/dataprep`,
    config,
    services: main.services,
    vectorStore,
    textVectorStore,
    descriptionStore,
    objectStore,
    async variant(options) {
      const cfg = loadDataprepConfig({ ...baseEnv, ...options.env });
      return (await build(cfg, options.objectStore ?? objectStore, options.vectorStore ?? vectorStore)).server;
    },
    async close() {
      for (const server of servers) await server.close();
      await vectorStore.close();
      await textVectorStore.close();
      await descriptionStore.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
