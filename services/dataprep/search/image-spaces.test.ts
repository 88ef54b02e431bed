import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ImageEmbedder } from '../../lib/inference/index.js';
import { LanceDbVectorStore } from '../../lib/vectors/index.js';
import { testModels } from '../testing/harness.js';
import { ImageSpaces, SPACES_TTL_MS } from './image-spaces.js';

/**
 * Which descriptor spaces the image store holds, on a real LanceDB store: records written before descriptors were
 * named (no `image_descriptor` at all, not even a column) are `global-v1`'s, and the answer is reused for
 * SPACES_TTL_MS.
 */
describe('ImageSpaces', () => {
  let dir: string;
  let store: LanceDbVectorStore;
  let embedder: ImageEmbedder;
  const record = (id: string, metadata: Record<string, string>) => ({
    id,
    vector: new Float32Array(store.dimension).fill(1),
    metadata: { bucket_name: 'b', video_id: id, kind: 'image', ...metadata },
  });

  beforeAll(async () => {
    embedder = (await testModels()).imageEmbedder;
  });

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dataprep-image-spaces-'));
    store = await LanceDbVectorStore.open({ dir, table: 'frames', dimension: embedder.dimension });
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('counts records from before descriptors were named as global-v1, beside named ones', async () => {
    await store.insert([record('legacy', {})]);
    expect(await new ImageSpaces(store, embedder, 'lowpass-v2').others()).toEqual(['global-v1']);
    await store.insert([record('new', { image_descriptor: 'lowpass-v2' })]);
    expect(await new ImageSpaces(store, embedder, 'lowpass-v2').others()).toEqual(['global-v1']);
    expect(await new ImageSpaces(store, embedder, 'global-v1').others()).toEqual(['lowpass-v2']);
  });

  it('asks the store again only once SPACES_TTL_MS have passed', async () => {
    let now = 0;
    const spaces = new ImageSpaces(store, embedder, 'lowpass-v2', () => now);
    expect(await spaces.others()).toEqual([]);
    await store.insert([record('legacy', {})]);
    now = SPACES_TTL_MS - 1;
    expect(await spaces.others()).toEqual([]);
    now = SPACES_TTL_MS;
    expect(await spaces.others()).toEqual(['global-v1']);
  });
});
