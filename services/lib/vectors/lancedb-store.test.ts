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
  it('refuses to open a table with another dimension', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lancedb-dim-'));
    const store = await LanceDbVectorStore.open({ dir, table: 't', dimension: 4 });
    await store.close();
    await expect(LanceDbVectorStore.open({ dir, table: 't', dimension: 8 })).rejects.toThrow(/dimension/);
    await rm(dir, { recursive: true, force: true });
  });
});
