import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { createVectorStore, LanceDbVectorStore, openVectorTable, VectorStoreUnavailableError } from './index.js';

describe('createVectorStore', () => {
  it('opens an embedded LanceDB store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'create-vectors-'));
    const store = await createVectorStore({ backend: 'lancedb', dir, table: 'embeddings', dimension: 4 });
    expect(store).toBeInstanceOf(LanceDbVectorStore);
    expect(store.backend).toBe('lancedb');
    expect(await store.health()).toBe('ok');
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('tells the caller when a background index build fails', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'create-vectors-'));
    const errors: unknown[] = [];
    // Two rows cannot train the index's partitions: the build fails in the background.
    const store = (await createVectorStore({
      backend: 'lancedb',
      dir,
      table: 'embeddings',
      dimension: 8,
      index: { minRows: 2 },
      onIndexError: (error) => errors.push(error),
    })) as LanceDbVectorStore;
    try {
      await store.insert(
        [0, 1].map((i) => ({
          id: `r${i}`,
          vector: Array.from({ length: 8 }, (_, d) => (d === i ? 1 : 0)),
          metadata: {},
        })),
      );
      await store.indexSettled();
      expect(errors).toHaveLength(1);
      // The store keeps answering, exactly.
      expect((await store.search([1, 0, 0, 0, 0, 0, 0, 0], 1))[0]).toMatchObject({ id: 'r0' });
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports an unreachable Weaviate as VectorStoreUnavailableError', async () => {
    await expect(
      createVectorStore({ backend: 'weaviate', url: 'http://127.0.0.1:9', collection: 'Frames', dimension: 4 }),
    ).rejects.toThrow(VectorStoreUnavailableError);
  });
});

describe('openVectorTable', () => {
  it('opens the named LanceDB table in the backend directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'open-table-'));
    const store = await openVectorTable({ backend: 'lancedb', dir }, 'captions', 4);
    try {
      await store.insert([{ id: 'a', vector: [1, 0, 0, 0], metadata: {} }]);
      const again = await LanceDbVectorStore.open({ dir, table: 'captions', dimension: 4 });
      expect(await again.count()).toBe(1);
      await again.close();
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports an unreachable Weaviate as VectorStoreUnavailableError', async () => {
    await expect(openVectorTable({ backend: 'weaviate', url: 'http://127.0.0.1:9' }, 'Captions', 4)).rejects.toThrow(
      VectorStoreUnavailableError,
    );
  });
});

describe('LanceDbVectorStore under concurrent writers', () => {
  it('serialises inserts that add different new columns', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lancedb-concurrent-'));
    const store = await LanceDbVectorStore.open({ dir, table: 't', dimension: 2 });
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        store.insert([{ id: `r${i}`, vector: [1, i], metadata: { [`key_${i}`]: i, video_id: 'v' } }]),
      ),
    );
    expect(await store.count({ equals: { video_id: 'v' } })).toBe(6);
    for (let i = 0; i < 6; i++) expect(await store.count({ equals: { [`key_${i}`]: i } })).toBe(1);
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sees columns another store instance added after it opened', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lancedb-two-'));
    const reader = await LanceDbVectorStore.open({ dir, table: 't', dimension: 2 });
    const writer = await LanceDbVectorStore.open({ dir, table: 't', dimension: 2 });
    await writer.insert([{ id: 'a', vector: [1, 0], metadata: { camera: 'north' } }]);
    // Both instances believe `lens` is new: the second addColumns loses the race and must carry on.
    await Promise.all([
      writer.insert([{ id: 'b', vector: [0, 1], metadata: { lens: 'wide' } }]),
      reader.insert([{ id: 'c', vector: [0, 1], metadata: { lens: 'tele' } }]),
    ]);
    expect(await writer.count({ equals: { lens: 'tele' } })).toBe(1);
    expect(await reader.count({ equals: { lens: 'wide' } })).toBe(1);
    expect(await reader.count({ equals: { camera: 'north' } })).toBe(1);
    expect(await reader.search([1, 0], 1, { equals: { camera: 'north' } })).toHaveLength(1);
    await reader.close();
    await writer.close();
    await rm(dir, { recursive: true, force: true });
  });
});
