/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { watchAbortListeners } from '../../../test/support/abort-listeners.js';
import { fixtureImage } from '../../../test/support/fixtures.js';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { loadModels, type ImageEmbedder, type LoadedModels } from '../../lib/inference/index.js';
import { LanceDbVectorStore } from '../../lib/vectors/lancedb-store.js';
import { embedMedia } from './embed-media.js';
import type { EmbedMediaRequest } from './embed-request.js';

/** ARGUS_INGEST_PARALLELISM's upper bound: the shards of one IngestJob, all running on the workload's one signal. */
const SHARDS = 64;
const silent = { info: () => undefined, warn: () => undefined, debug: () => undefined };

let models: LoadedModels;
let dbDir: string;
let store: LanceDbVectorStore;

beforeAll(async () => {
  models = await loadModels({ modelsDir: await ensureDefaultModels(), provider: 'cpu', threads: 0 });
  dbDir = await mkdtemp(path.join(os.tmpdir(), 'argus-pipeline-signal-'));
  store = await LanceDbVectorStore.open({ dir: dbDir, table: 'embeddings', dimension: models.imageEmbedder.dimension });
});
afterAll(async () => {
  await store?.close();
  await models?.release();
  await rm(dbDir, { recursive: true, force: true });
});

/**
 * The real embedder behind a barrier: each run's embedding waits until all `parties` runs reached theirs (every run
 * is then in flight at once, whatever the scheduling); then every other call embeds and the rest fail.
 */
function barrierEmbedder(parties: number): ImageEmbedder {
  const real = models.imageEmbedder;
  let arrived = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let calls = 0;
  return {
    info: real.info,
    dimension: real.dimension,
    async embed(images, options) {
      const call = calls++;
      if (++arrived === parties) open();
      await gate;
      if (call % 2 === 1) throw new Error('embedder unavailable');
      return real.embed(images, options);
    },
  };
}

describe('embedding runs sharing one long-lived signal (the shards of an ingest workload)', () => {
  it(`${SHARDS} runs in flight at once, succeeding or failing, add no listener each to the shared signal`, async () => {
    const deps = { imageEmbedder: barrierEmbedder(SHARDS), detector: models.detector, vectors: store, logger: silent };
    const workload = new AbortController();
    const watch = watchAbortListeners(workload.signal);
    const request = (i: number): EmbedMediaRequest => ({
      localPath: fixtureImage('pexels_double_decker_bus.jpg'),
      kind: 'image',
      bucketName: 'signal-test',
      videoId: `v${i}`,
      filename: 'bus.jpg',
      frameInterval: 1,
      detection: { enabled: false, confidence: 0.5 },
      tags: [],
      videoUrl: `http://127.0.0.1/v1/dataprep/media/download?video_id=v${i}`,
      uploadedAt: '2025-01-02T03:04:05.000Z',
      signal: workload.signal,
    });
    const outcomes = await Promise.all(
      Array.from({ length: SHARDS }, (_, i) =>
        embedMedia(deps, request(i)).then(
          (result) => result.embeddingsStored,
          (error: Error) => error.message,
        ),
      ),
    );
    watch.stop();
    expect(outcomes.filter((outcome) => outcome === 1)).toHaveLength(SHARDS / 2);
    expect(outcomes.filter((outcome) => outcome === 'embedder unavailable')).toHaveLength(SHARDS / 2);
    expect({ peak: watch.peak, warned: watch.warned(), now: watch.current() }).toEqual({
      peak: 1,
      warned: false,
      now: 0,
    });
  });
});
