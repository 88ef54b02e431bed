import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { connect } from '@lancedb/lancedb';
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

  it('upgrades a table written before range filters: numbers stored earlier match ranges at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lancedb-upgrade-'));
    // The layout of the previous version: JSON text columns only, no n_* twins.
    const db = await connect(dir);
    const old = (i: number, extra: Record<string, string | null>) => ({
      id: `old-${i}`,
      vector: [1, i, 0, 0],
      tags: ['"car"'],
      metadata: JSON.stringify({ timestamp: i * 2, frame_id: i, tags: ['car'] }),
      m_video_id: '"v"',
      m_timestamp: JSON.stringify(i * 2),
      m_frame_id: JSON.stringify(i),
      ...extra,
    });
    const table = await db.createTable('t', [old(0, { m_camera: '"5"' }), old(1, { m_camera: '7' }), old(2, {})]);
    table.close();
    db.close();
    const store = await LanceDbVectorStore.open({ dir, table: 't', dimension: 4 });
    expect(await store.count({ range: { timestamp: { gte: 2 } } })).toBe(2);
    expect(await store.count({ range: { frame_id: { lte: 0 } } })).toBe(1);
    // A JSON string that looks like a number is not a number.
    expect(await store.count({ range: { camera: {} } })).toBe(1);
    await store.insert([{ id: 'new', vector: [0, 1, 0, 0], metadata: { timestamp: 10, camera: 9 } }]);
    expect(await store.count({ range: { timestamp: { gte: 2 }, camera: { gte: 7 } } })).toBe(2);
    await store.close();
    // Opening again finds the table upgraded and changes nothing.
    const again = await LanceDbVectorStore.open({ dir, table: 't', dimension: 4 });
    expect(await again.count({ range: { timestamp: {} } })).toBe(4);
    await again.close();
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
