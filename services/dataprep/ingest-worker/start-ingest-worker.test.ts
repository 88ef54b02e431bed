import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { makeTestVideo } from '../../../test/support/media.js';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { API_VERSION } from '../../../operator/api/index.js';
import { EmbeddedResourceStore } from '../../../operator/drivers/embedded/index.js';
import { createLogger } from '../../lib/log/index.js';
import { LocalObjectStore } from '../../lib/storage/index.js';
import { startIngestWorker, type StartedIngestWorker } from './start-ingest-worker.js';

const logger = createLogger({ service: 'ingest-worker-test', level: 'error', json: true });
logger.silent = true;

/**
 * `argus worker ingest` builds the worker from the environment alone (what a Job pod has) over a ResourceStore it
 * is given; here the embedded store stands in for the API server (the kubernetes one is tested at its own boundary).
 */
describe('startIngestWorker (the worker of a cluster Job pod)', () => {
  let dir: string;
  let store: EmbeddedResourceStore;
  let started: StartedIngestWorker;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ingest-worker-'));
    store = await EmbeddedResourceStore.open({ dir: path.join(dir, 'control-plane') });
    const env = { ARGUS_DATA_DIR: path.join(dir, 'data'), ARGUS_MODELS_DIR: await ensureDefaultModels() };
    started = await startIngestWorker(env, store, logger);
    // What the service stored before it created the job, in the same storage the pod is configured with.
    const media = new LocalObjectStore(path.join(dir, 'data', 'dataprep', 'media'));
    const video = await readFile(await makeTestVideo({ seconds: 1, fps: 4, width: 96, height: 40 }));
    await media.put('pod-bucket', 'v1/clip.mp4', video, { contentType: 'video/mp4' });
  });

  afterAll(async () => {
    await started?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs its shard of the job and writes each item result into the IngestJob status', async () => {
    await store.create('IngestJob', {
      apiVersion: API_VERSION,
      kind: 'IngestJob',
      metadata: { name: 'pod-job', namespace: 'team-a' },
      spec: {
        source: 'batch_existing',
        bucket: 'pod-bucket',
        frameInterval: 2,
        detection: { enabled: false, confidence: 0.85 },
        tags: [],
        storeCopy: true,
        items: [
          { identifier: 'v1', videoId: 'v1' },
          { identifier: 'other-shard', videoId: 'v2' },
          { identifier: 'missing', videoId: 'missing' },
        ],
      },
    });
    const signal = new AbortController().signal;
    await started.worker({ namespace: 'team-a', name: 'pod-job', index: 0, completions: 2, signal });
    const job = await store.get('IngestJob', 'team-a', 'pod-job');
    // Shard 0 of 2 takes items 0 and 2; item 1 is shard 1's.
    expect(job?.status?.items).toEqual([
      expect.objectContaining({ index: 0, identifier: 'v1', videoId: 'v1', status: 'success' }),
      {
        index: 2,
        identifier: 'missing',
        videoId: 'missing',
        status: 'error',
        message: 'No video found in directory missing of bucket pod-bucket',
      },
    ]);
    expect(job?.status?.items?.[0].embeddingsCount).toBeGreaterThan(0);
  });
});
