import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { makeTestVideo } from '../../test/support/media.js';
import { ensureDefaultModels } from '../../test/support/models.js';
import { listen, type RunningServer } from '../lib/http/index.js';
import type { ImageEmbedder } from '../lib/inference/index.js';
import { createLogger } from '../lib/log/index.js';
import { LocalObjectStore } from '../lib/storage/index.js';
import { LanceDbVectorStore, type VectorRecord, type VectorStore } from '../lib/vectors/index.js';
import { createApp } from './app.js';
import { loadDataprepConfig } from './config.js';
import { embedMedia } from './pipeline/index.js';
import type { ProcessingInput, ProcessingOutcome } from './ingest/processing.js';
import type { DataprepServices } from './runtime/services.js';
import { TelemetryLog } from './ingest/telemetry.js';
import { formFile, postForm, postJson } from './testing/http-client.js';
import { testModels, TEST_LIMITS } from './testing/harness.js';

const logger = createLogger({ service: 'dataprep-test', level: 'error', json: true });
logger.silent = true;

/** A promise with its resolve function, to hold a step until the test lets it go on. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Re-processing replaces on success (issue 19, item 2): through the real routes, pipeline, models and LanceDB, a
 * re-process that fails half-way — the model failing, or the client leaving — leaves exactly the old embeddings, and
 * one that succeeds leaves exactly the new ones.
 */
describe('dataprep re-processing', () => {
  const bucket = 'reprocess';
  let dataDir: string;
  let server: RunningServer;
  let services: DataprepServices;
  let store: LanceDbVectorStore;
  let base: string;
  let videoId: string;
  /** Set by a test: runs inside the third embedder call of the next run, whose error then fails that run. */
  let failThirdEmbed: (() => Promise<Error>) | undefined;
  /** Resolved at the first insert of a run other than `oldRun`; `holdInsert` may keep that insert waiting. */
  let newRunWritten = deferred();
  let holdInsert: (() => Promise<void>) | undefined;
  let oldRun: string | undefined;
  /** Set by a test: the next delete of the description store fails (after the image vectors' delete). */
  let failDescriptionDelete = false;
  /** The processing calls the routes made, with their inputs, in order. */
  const calls: Array<{ input: ProcessingInput; outcome: Promise<ProcessingOutcome> }> = [];

  /** Every embedding of the video: id and run id. */
  const embeddings = async () => {
    const probe = new Float32Array(store.dimension).fill(1 / Math.sqrt(store.dimension));
    const hits = await store.search(probe, 1000, { equals: { bucket_name: bucket, video_id: videoId } });
    return hits.map((hit) => ({ id: hit.id, run: hit.metadata.run_id })).sort((a, b) => a.id.localeCompare(b.id));
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'dataprep-reprocess-'));
    const models = await testModels();
    const config = loadDataprepConfig({ ARGUS_DATA_DIR: dataDir, ARGUS_MODELS_DIR: await ensureDefaultModels() });
    store = await LanceDbVectorStore.open({
      dir: path.join(dataDir, 'vectors'),
      table: 'frames',
      dimension: models.imageEmbedder.dimension,
    });
    const textStore = await LanceDbVectorStore.open({
      dir: path.join(dataDir, 'vectors'),
      table: 'summaries',
      dimension: models.textEmbedder.dimension,
    });
    const descriptionStore = await LanceDbVectorStore.open({
      dir: path.join(dataDir, 'vectors'),
      table: 'descriptions',
      dimension: models.textEmbedder.dimension,
    });
    let embedCalls = 0;
    const imageEmbedder: ImageEmbedder = {
      info: models.imageEmbedder.info,
      dimension: models.imageEmbedder.dimension,
      embed: async (images, options) => {
        if (failThirdEmbed && ++embedCalls === 3) throw await failThirdEmbed();
        return models.imageEmbedder.embed(images, options);
      },
    };
    const watched: VectorStore = Object.create(store) as VectorStore;
    watched.insert = async (records: VectorRecord[]) => {
      if (oldRun && records.some((record) => record.metadata.run_id !== oldRun)) {
        newRunWritten.resolve();
        await holdInsert?.();
      }
      return store.insert(records);
    };
    const descriptions: VectorStore = Object.create(descriptionStore) as VectorStore;
    descriptions.delete = async (filter) => {
      if (!failDescriptionDelete) return descriptionStore.delete(filter);
      failDescriptionDelete = false;
      throw new Error('description store went away');
    };
    const pipelineDeps = { imageEmbedder, detector: models.detector, vectors: watched, logger };
    const created = createApp({
      config,
      logger,
      objectStore: new LocalObjectStore(path.join(dataDir, 'media')),
      vectorStore: watched,
      textVectorStore: textStore,
      descriptionStore: descriptions,
      models,
      // Small batches: a run writes in several inserts, so it can fail after its first one.
      embedMedia: (request) => embedMedia(pipelineDeps, request, { embedBatchSize: 2, writeBatchSize: 2 }),
      telemetry: await TelemetryLog.open({ maxRecords: 20 }),
      limits: TEST_LIMITS,
    });
    services = created.services;
    const process = services.processing.process.bind(services.processing);
    services.processing.process = (input) => {
      const outcome = process(input);
      calls.push({ input, outcome });
      return outcome;
    };
    server = await listen(created.app, { port: 0, host: '127.0.0.1', logger, name: 'dataprep-reprocess-test' });
    base = `${server.url}/v1/dataprep`;

    // 20 frames, every 2nd without detection: 10 embeddings, written two at a time.
    const video = await makeTestVideo({ seconds: 2, fps: 10, width: 160, height: 120 });
    const res = await postForm(
      `${base}/media/upload?bucket_name=${bucket}&frame_interval=2&enable_object_detection=false`,
      await formFile(video, 'clip.mp4', 'video/mp4'),
    );
    expect(res.status).toBe(201);
    videoId = (await res.json()).video_id;
  });

  afterAll(async () => {
    await server?.close();
    await services?.vectorStore.close();
    await services?.textVectorStore.close();
    await services?.descriptionStore.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const reprocess = () =>
    postJson(`${base}/media/process`, {
      bucket_name: bucket,
      video_id: videoId,
      frame_interval: 2,
      enable_object_detection: false,
    });

  /** The current set, remembered as the one a failing run must leave alone. */
  const rememberOldSet = async () => {
    const old = await embeddings();
    expect(old).toHaveLength(10);
    expect(new Set(old.map((e) => e.run)).size).toBe(1);
    oldRun = String(old[0].run);
    newRunWritten = deferred();
    return old;
  };

  it('keeps exactly the old embeddings when the model fails half-way through a re-process', async () => {
    const old = await rememberOldSet();
    // The third embedder call fails only once the run has stored its first embeddings beside the old ones.
    failThirdEmbed = async () => {
      await newRunWritten.promise;
      return new Error('model run failed');
    };
    const res = await reprocess();
    failThirdEmbed = undefined;
    expect(res.status).toBe(500);
    await expect(calls.at(-1)!.outcome).rejects.toThrow('model run failed');
    expect(await embeddings()).toEqual(old);
  });

  it('keeps exactly the old embeddings when the client leaves half-way through a re-process', async () => {
    const old = await rememberOldSet();
    const before = calls.length;
    const body = JSON.stringify({ bucket_name: bucket, video_id: videoId, frame_interval: 2 });
    const req = http.request(`${base}/media/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('error', () => undefined);
    // The first insert of the new run waits until the client is gone and the server has noticed.
    holdInsert = async () => {
      req.destroy();
      const { signal } = calls[before].input;
      if (!signal!.aborted) await once(signal!, 'abort');
    };
    req.end(body);
    await newRunWritten.promise;
    await expect(calls[before].outcome).rejects.toThrow('client disconnected');
    holdInsert = undefined;
    expect(await embeddings()).toEqual(old);
  });

  it('leaves exactly the new embeddings when a re-process succeeds', async () => {
    const old = await rememberOldSet();
    const res = await reprocess();
    expect(res.status).toBe(201);
    const { runId } = await calls.at(-1)!.outcome;
    const now = await embeddings();
    expect(now).toHaveLength(10);
    expect(now.every((e) => e.run === runId)).toBe(true);
    const oldIds = new Set(old.map((e) => e.id));
    expect(now.some((e) => oldIds.has(e.id))).toBe(false);
    expect(await store.count({ equals: { bucket_name: bucket, video_id: videoId } })).toBe(10);
  });

  it('keeps the new embeddings when removing the old ones fails after they went (never none at all)', async () => {
    await rememberOldSet();
    failDescriptionDelete = true;
    const res = await reprocess();
    expect(failDescriptionDelete).toBe(false);
    expect(res.status).toBe(500);
    const outcome = calls.at(-1)!.outcome;
    await expect(outcome).rejects.toThrow('description store went away');
    const now = await embeddings();
    expect(now).toHaveLength(10);
    expect(now.some((e) => e.run === oldRun)).toBe(false);
  });

  it('runs re-processes of one video one at a time, the last one completed winning', async () => {
    await rememberOldSet();
    const [first, second] = await Promise.all([reprocess(), reprocess()]);
    expect([first.status, second.status]).toEqual([201, 201]);
    const { runId } = await calls.at(-1)!.outcome;
    const now = await embeddings();
    expect(now).toHaveLength(10);
    expect(now.every((e) => e.run === runId)).toBe(true);
  });
});
