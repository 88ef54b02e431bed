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

  it('stays exact below the index threshold, builds the vector index from it, and still finds rows added later', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lancedb-ann-'));
    const dimension = 16;
    // Vectors around 8 directions, so the index has clusters to learn; each row is findable by its own vector.
    const vectorOf = (i: number) => {
      let x = (i * 2654435761) >>> 0 || 1;
      return Array.from({ length: dimension }, (_, d) => {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        return (d === i % 8 ? 4 : 0) + (x >>> 0) / 0xffffffff;
      });
    };
    const rows = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, j) => ({
        id: `r${from + j}`,
        vector: vectorOf(from + j),
        metadata: { video_id: `v${(from + j) % 5}`, timestamp: from + j },
      }));
    const errors: unknown[] = [];
    const options = {
      dir,
      table: 't',
      dimension,
      index: { minRows: 500, reindexRows: 100 },
      onIndexError: (e: unknown) => errors.push(e),
    };
    const store = await LanceDbVectorStore.open(options);
    await store.insert(rows(0, 400));
    await store.indexSettled();
    // A second handle on the table, reading its latest version each time.
    const db = await connect(dir, { readConsistencyInterval: 0 });
    const table = await db.openTable('t');
    expect(await table.listIndices()).toEqual([]);
    await store.insert(rows(400, 600));
    await store.indexSettled();
    expect(errors).toEqual([]);
    // The vector index, and scalar indexes on the filter columns the search endpoint uses that the table has.
    expect((await table.listIndices()).map((index) => index.columns[0]).sort()).toEqual([
      'm_bucket_name',
      'm_kind',
      'm_video_id',
      'n_timestamp',
      'tags',
      'vector',
    ]);
    expect(await table.indexStats('vector_idx')).toMatchObject({ numIndexedRows: 600, numUnindexedRows: 0 });
    // Rows added after the build are not in the index yet, and are found all the same.
    await store.insert(rows(600, 650));
    expect(await table.indexStats('vector_idx')).toMatchObject({ numUnindexedRows: 50 });
    for (const i of [3, 321, 599, 612, 649]) {
      const [hit] = await store.search(vectorOf(i), 1);
      expect(hit).toMatchObject({ id: `r${i}` });
      expect(hit.score).toBeCloseTo(1, 3);
    }
    // Filters apply with the index as without it, and exact search agrees on the top hit.
    const filtered = await store.search(vectorOf(10), 5, {
      equals: { video_id: 'v0' },
      range: { timestamp: { gte: 5 } },
    });
    expect(filtered.map((h) => h.id)).toContain('r10');
    expect(filtered.every((h) => h.metadata.video_id === 'v0' && (h.metadata.timestamp as number) >= 5)).toBe(true);
    const [exact] = await store.search(vectorOf(612), 1, undefined, { exact: true });
    expect(exact.id).toBe('r612');
    // Enough waiting rows: merged into the index by an optimize.
    await store.insert(rows(650, 760));
    await store.indexSettled();
    expect(await table.indexStats('vector_idx')).toMatchObject({ numIndexedRows: 760, numUnindexedRows: 0 });
    expect(await store.count({ range: { timestamp: { gte: 700 } } })).toBe(60);
    // Four times the rows it was trained on: trained again on all of them.
    await store.insert(rows(760, 2400));
    await store.indexSettled();
    expect(await table.indexStats('vector_idx')).toMatchObject({ numIndexedRows: 2400, numUnindexedRows: 0 });
    expect((await store.search(vectorOf(2222), 1))[0].id).toBe('r2222');
    expect(errors).toEqual([]);
    table.close();
    db.close();
    await store.close();
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
