import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { LanceDbVectorStore } from './lancedb-store.js';
import { CONTRACT_DIMENSION, describeVectorStoreContract } from './vector-store.contract.js';

describeVectorStoreContract('lancedb (embedded)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lancedb-contract-'));
  const options = { dir, table: 'embeddings', dimension: CONTRACT_DIMENSION };
  return {
    store: await LanceDbVectorStore.open(options),
    reopen: () => LanceDbVectorStore.open(options),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('LanceDbVectorStore specifics', () => {
  it('runs concurrent writes that add columns one at a time, and close lets them finish first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lancedb-writes-'));
    const store = await LanceDbVectorStore.open({ dir, table: 't', dimension: 4 });
    const writes = Array.from({ length: 8 }, (_, i) =>
      store.insert([{ id: `r${i}`, vector: [1, i, 0, 0], metadata: { video_id: 'v', [`key_${i}`]: i } }]),
    );
    const deleted = store.delete({ equals: { key_7: 7 } });
    await store.close();
    await Promise.all(writes);
    expect(await deleted).toBe(1);
    await expect(store.insert([{ id: 'late', vector: [1, 0, 0, 0], metadata: {} }])).rejects.toThrow(/closed/);
    const reopened = await LanceDbVectorStore.open({ dir, table: 't', dimension: 4 });
    expect(await reopened.count()).toBe(7);
    expect(await reopened.count({ equals: { key_3: 3 } })).toBe(1);
    await reopened.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses to open a table with another dimension', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lancedb-dim-'));
    const store = await LanceDbVectorStore.open({ dir, table: 't', dimension: 4 });
    await store.close();
    await expect(LanceDbVectorStore.open({ dir, table: 't', dimension: 8 })).rejects.toThrow(/dimension/);
    await rm(dir, { recursive: true, force: true });
  });
});
