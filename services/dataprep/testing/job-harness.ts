import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { TERMINAL_INGEST_STATES } from '../../../operator/api/index.js';
import { loadControllerSettings } from '../../../operator/config.js';
import { openEmbeddedControlPlane } from '../../../operator/embedded-control-plane.js';
import type { ServiceControlPlane } from '../../../operator/ports/index.js';
import { listen, type RunningServer } from '../../lib/http/index.js';
import { createLogger } from '../../lib/log/index.js';
import { LocalObjectStore, type ObjectStore } from '../../lib/storage/index.js';
import type { VectorStore } from '../../lib/vectors/index.js';
import { createApp } from '../app.js';
import { loadDataprepConfig, type DataprepConfig } from '../config.js';
import type { EmbedMediaRequest } from '../pipeline/index.js';
import { embedMedia } from '../pipeline/index.js';
import { INGEST_WORKER } from '../../../operator/api/index.js';
import { ingestWorker } from '../ingest-worker/ingest-worker.js';
import type { BatchJobStatus } from '../jobs/ingest-jobs.js';
import { openVectorStores } from '../runtime/open-runtime.js';
import type { DataprepServices } from '../runtime/services.js';
import { TelemetryLog } from '../ingest/telemetry.js';
import { TEST_LIMITS, testModels } from './harness.js';

/** A point the pipeline stops at for one video until the test lets it go on. */
export interface Hold {
  /** Resolves with the pipeline's request when it reached the video. */
  reached: Promise<EmbedMediaRequest>;
  release(): void;
}

/** Holds the embedding of chosen videos (to act while a job item is running). */
export class EmbedGate {
  private readonly holds = new Map<
    string,
    { reached: (request: EmbedMediaRequest) => void; released: Promise<void> }
  >();

  /** The next embedding of `key` (a video id or a file name) waits until `release()` is called. */
  hold(key: string): Hold {
    let reached!: (request: EmbedMediaRequest) => void;
    let release!: () => void;
    const reachedPromise = new Promise<EmbedMediaRequest>((resolve) => (reached = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.holds.set(key, { reached, released });
    return { reached: reachedPromise, release };
  }

  async pass(request: EmbedMediaRequest): Promise<void> {
    const key = this.holds.has(request.videoId) ? request.videoId : request.filename;
    const hold = this.holds.get(key);
    if (!hold) return;
    this.holds.delete(key);
    hold.reached(request);
    // A stopping worker aborts the run: the hold gives way as the pipeline itself would.
    const signal = request.signal;
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal!.reason);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      void hold.released.then(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }
}

/** dataprep with the embedded control plane (store, driver, controllers) and the real ingest worker. */
export interface JobHarness {
  base: string;
  config: DataprepConfig;
  services: DataprepServices;
  vectorStore: VectorStore;
  objectStore: ObjectStore;
  controlPlane: ServiceControlPlane;
  /** The ingest data root (MM_DATAPREP_INGEST_DATA_ROOT); a temp dir. */
  ingestRoot: string;
  /** A directory outside the ingest root (targets of escaping symlinks). */
  outside: string;
  gate: EmbedGate;
  /**
   * Stops this "process" (server, controllers, workloads: a running item is aborted and rolled back) and starts a new
   * one over the same data dir, stores and ingest root, as a service restart would.
   */
  restart(): Promise<void>;
  /** Polls GET /media/jobs/{id} on every change of the job until `until` holds (default: a terminal state). */
  waitForJob(jobId: string, until?: (body: BatchJobStatus) => boolean): Promise<BatchJobStatus>;
  close(): Promise<void>;
}

/** What a harness changes. */
export interface JobHarnessOptions {
  env?: Record<string, string>;
  /** Media storage (default: the local store under the data dir). */
  objectStore?: ObjectStore;
  /** Register the ingest worker (default true); without it jobs stay pending. */
  registerWorker?: boolean;
}

const logger = createLogger({ service: 'dataprep-jobs-test', level: 'error', json: true });
logger.silent = true;

const isTerminal = (body: BatchJobStatus) => (TERMINAL_INGEST_STATES as readonly string[]).includes(body.state);

/** Starts dataprep on 127.0.0.1:0 over local storage, LanceDB and the embedded control plane, in a temp dir. */
export async function startJobHarness(options: JobHarnessOptions = {}): Promise<JobHarness> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dataprep-jobs-'));
  const ingestRoot = path.join(dir, 'ingest');
  const outside = path.join(dir, 'outside');
  await mkdir(ingestRoot, { recursive: true });
  await mkdir(outside, { recursive: true });
  const loaded = await testModels();
  const config = loadDataprepConfig({
    ARGUS_DATA_DIR: path.join(dir, 'data'),
    ARGUS_MODELS_DIR: await ensureDefaultModels(),
    MM_DATAPREP_INGEST_DATA_ROOT: ingestRoot,
    // The image servers of the URL items listen on loopback, refused unless allow-listed.
    MM_DATAPREP_IMAGE_URL_ALLOW: '127.0.0.1/32',
    ...options.env,
  });
  const {
    image: vectorStore,
    text: textVectorStore,
    descriptions: descriptionStore,
  } = await openVectorStores(config, loaded.imageEmbedder.dimension, loaded.textEmbedder.dimension);
  const objectStore = options.objectStore ?? new LocalObjectStore(path.join(config.dataDir, 'media'));
  const gate = new EmbedGate();
  const pipelineDeps = {
    imageEmbedder: loaded.imageEmbedder,
    imageDescriptor: config.imageDescriptor,
    detector: loaded.detector,
    vectors: vectorStore,
    logger,
  };
  const telemetry = await TelemetryLog.open({ maxRecords: 20 });

  /** What a process opens over the data dir: its control plane, the app with the worker registered, the server. */
  const startProcess = async () => {
    const plane = await openEmbeddedControlPlane({
      dataDir: path.join(dir, 'data'),
      namespace: 'default',
      logger,
      config: loadControllerSettings({}),
    });
    const { app, services } = createApp({
      config,
      logger,
      objectStore,
      vectorStore,
      textVectorStore,
      descriptionStore,
      models: loaded,
      embedMedia: async (request) => {
        await gate.pass(request);
        return embedMedia(pipelineDeps, request);
      },
      telemetry,
      controlPlane: plane.controlPlane,
      limits: TEST_LIMITS,
    });
    if (options.registerWorker ?? true) {
      plane.controlPlane.registerWorker(INGEST_WORKER, ingestWorker(services, plane.controlPlane.resources));
    }
    await plane.startControllers();
    const server: RunningServer = await listen(app, { port: 0, host: '127.0.0.1', logger, name: 'dataprep-jobs-test' });
    return { plane, services, server, base: `${server.url}/v1/dataprep` };
  };
  const stopProcess = async (running: Awaited<ReturnType<typeof startProcess>>) => {
    await running.server.close();
    await running.plane.close();
  };
  let current = await startProcess();

  const waitForJob = (jobId: string, until: (body: BatchJobStatus) => boolean = isTerminal) =>
    new Promise<BatchJobStatus>((resolve, reject) => {
      let done = false;
      let checking = Promise.resolve();
      const check = () => {
        checking = checking
          .then(async () => {
            if (done) return;
            const response = await fetch(`${current.base}/media/jobs/${jobId}`);
            const body = (await response.json()) as BatchJobStatus;
            if (response.status !== 200)
              throw new Error(`GET job answered ${response.status}: ${JSON.stringify(body)}`);
            if (until(body)) {
              done = true;
              await watch.then((w) => w.stop());
              resolve(body);
            }
          })
          .catch((error) => {
            done = true;
            reject(error);
          });
      };
      const watch = current.plane.controlPlane.resources.watch('IngestJob', 'default', (event) => {
        if (event.object.metadata.name === jobId) check();
      });
      watch.then(check, reject);
    });

  return {
    get base() {
      return current.base;
    },
    config,
    get services() {
      return current.services;
    },
    vectorStore,
    objectStore,
    get controlPlane() {
      return current.plane.controlPlane;
    },
    ingestRoot,
    outside,
    gate,
    waitForJob,
    async restart() {
      await stopProcess(current);
      current = await startProcess();
    },
    async close() {
      await stopProcess(current);
      await vectorStore.close();
      await textVectorStore.close();
      await descriptionStore.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
