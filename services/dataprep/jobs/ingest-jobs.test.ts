import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  INGEST_MAX_ITEMS,
  ITEM_IDENTIFIER_MAX,
  ITEM_URL_MAX,
  type IngestJobSpec,
} from '../../../operator/api/index.js';
import { EmbeddedResourceStore } from '../../../operator/drivers/embedded/index.js';
import { batchJobStatus, IngestJobs, itemIdentifier } from './ingest-jobs.js';
import { InvalidInputError, mapDataprepError } from '../errors.js';

const spec = (items: IngestJobSpec['items']): IngestJobSpec => ({
  source: 'image_batch',
  bucket: 'unit-bucket',
  frameInterval: 1,
  detection: { enabled: false, confidence: 0.85 },
  tags: [],
  storeCopy: true,
  items,
});

describe('IngestJobs over a resource store', () => {
  let dir: string;
  let store: EmbeddedResourceStore;
  let jobs: IngestJobs;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ingest-jobs-'));
    store = await EmbeddedResourceStore.open({ dir });
    jobs = new IngestJobs({ resources: store, namespace: 'unit', registerWorker: () => undefined });
  });

  afterAll(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a job in the control plane namespace and maps it to the contract status', async () => {
    const job = await jobs.create(spec([{ identifier: 'a.png', videoId: 'v-a', key: 'v-a/a.png' }]));
    expect(job.metadata.namespace).toBe('unit');
    expect(batchJobStatus(job)).toEqual({
      status: 'success',
      job_id: job.metadata.name,
      state: 'pending',
      total: 1,
      completed: 0,
      failed: 0,
      skipped: 0,
      items: [],
    });
    await store.updateStatus('IngestJob', {
      ...job,
      status: {
        state: 'completed',
        items: [{ index: 0, identifier: 'a.png', videoId: 'v-a', status: 'success', embeddingsCount: 3 }],
      },
    });
    const read = await jobs.get(job.metadata.name);
    expect(batchJobStatus(read!)).toMatchObject({
      state: 'completed',
      completed: 1,
      items: [{ identifier: 'a.png', video_id: 'v-a', status: 'success', embeddings_count: 3 }],
    });
  });

  it('requests cancellation once; a finished job and an unknown one are answered as they are', async () => {
    const job = await jobs.create(spec([{ identifier: 'b.png', videoId: 'v-b', key: 'v-b/b.png' }]));
    const cancelled = await jobs.cancel(job.metadata.name);
    expect(cancelled?.spec.cancelRequested).toBe(true);
    const again = await jobs.cancel(job.metadata.name);
    expect(again?.metadata.resourceVersion).toBe(cancelled?.metadata.resourceVersion);
    expect(await jobs.cancel('ingest-0123456789abcdef0123456789abcdef')).toBeUndefined();
    expect(await jobs.get('../etc')).toBeUndefined();
  });

  it('refuses a batch whose items would not fit one API object', async () => {
    const url = `https://images.example/${'x'.repeat(ITEM_URL_MAX - 40)}`;
    const items = Array.from({ length: INGEST_MAX_ITEMS }, (_, i) => ({
      identifier: `image-${i}`,
      videoId: `video-${i}`,
      url,
    }));
    const refused = jobs.create(spec(items));
    const error = await refused.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(mapDataprepError(error)?.status).toBe(400);
    expect(await store.list('IngestJob', 'unit')).toHaveLength(2);
  });

  it('cuts identifiers to what a job holds', () => {
    expect(itemIdentifier('short')).toBe('short');
    const cut = itemIdentifier('n'.repeat(ITEM_IDENTIFIER_MAX + 10));
    expect(cut).toHaveLength(ITEM_IDENTIFIER_MAX);
    expect(cut.endsWith('…')).toBe(true);
  });
});
