import { Index, type Table } from '@lancedb/lancedb';

/**
 * When and how the embedded store indexes its vectors (README, dataprep "Performance"). Below `minRows` every search
 * is exact (a flat scan, always right). From `minRows` on, the store builds an IVF-PQ index in the background (IVF
 * partitions, product-quantised codes of 4 bits per 8 dimensions, cosine), and searches probe `nprobes` partitions
 * and re-rank `refineFactor` × k candidates on the full vectors. Rows added later are merged into the index by an
 * optimize once `reindexRows` of them wait; until then LanceDB searches them exactly beside the index.
 */
export interface LanceDbIndexOptions {
  /** Rows from which the vector index is built; `Infinity` keeps the store exact. Default 10,000. */
  minRows: number;
  /** Unindexed rows that trigger merging them into the index (table optimize). Default 10,000. */
  reindexRows: number;
  /** IVF partitions probed at least per query (more under a narrow filter until k rows are found). */
  nprobes: number;
  /** Candidates re-ranked on full vectors, as a multiple of k. */
  refineFactor: number;
}

/** Defaults chosen with `npm run bench search` (100,000 × 1792-d frames): recall@10 ≥ 0.95 at p99 < 20 ms. */
export const DEFAULT_INDEX_OPTIONS: Readonly<LanceDbIndexOptions> = Object.freeze({
  minRows: 10_000,
  reindexRows: 10_000,
  nprobes: 8,
  refineFactor: 10,
});

/** Name LanceDB gives the index on the `vector` column. */
export const VECTOR_INDEX = 'vector_idx';

/**
 * The vector index for a table of `rows` rows and vectors of `dimension`: about √rows / 5 partitions and 4-bit PQ
 * codes over 8-dimension sub-vectors (where the dimension allows; else 16 or 1). Why these: on a 2-core machine
 * 8-bit PQ took 5 minutes to train on 100,000 × 1792-d, 4-bit about half a minute, and the re-ranking on full vectors
 * gives the recall back. IVF-RQ (RaBitQ) was tried and returned wrong cosine distances for whole partitions in
 * LanceDB 0.31; IVF-FLAT reads full vectors, 5–10× slower per query at the same recall.
 */
export function vectorIndexFor(rows: number, dimension: number): Index {
  const numPartitions = Math.max(4, Math.round(Math.sqrt(rows) / 5));
  const numSubVectors = dimension % 8 === 0 ? dimension / 8 : dimension % 16 === 0 ? dimension / 16 : 1;
  return Index.ivfPq({
    distanceType: 'cosine',
    numPartitions,
    numSubVectors,
    numBits: 4,
    maxIterations: 20,
    sampleRate: 64,
  });
}

/** What the maintenance step did, for logs and tests. */
export type IndexAction = 'none' | 'built' | 'rebuilt' | 'optimized';

/** Rows an index was trained on, per table handle; a table grown to RETRAIN_GROWTH times that is trained again. */
const trainedRows = new WeakMap<Table, number>();
/** Growth that makes the partitions too coarse (each holds 4× the rows it was sized for): train again. */
export const RETRAIN_GROWTH = 4;

/**
 * One maintenance step: build the index once the table is large enough; train it again once the table has grown
 * RETRAIN_GROWTH times past what it was trained on (optimize only appends to the partitions it has); else merge
 * waiting rows into it.
 */
export async function maintainVectorIndex(
  table: Table,
  dimension: number,
  options: LanceDbIndexOptions,
): Promise<IndexAction> {
  const indices = await table.listIndices();
  const rows = await table.countRows();
  if (!indices.some((index) => index.columns.includes('vector'))) {
    if (rows < options.minRows) return 'none';
    await table.createIndex('vector', { config: vectorIndexFor(rows, dimension), replace: false });
    trainedRows.set(table, rows);
    return 'built';
  }
  const stats = await table.indexStats(VECTOR_INDEX);
  // An index found on open counts as trained on what it holds.
  const trained = trainedRows.get(table) ?? stats?.numIndexedRows ?? rows;
  trainedRows.set(table, trained);
  if (rows >= trained * RETRAIN_GROWTH) {
    await table.createIndex('vector', { config: vectorIndexFor(rows, dimension), replace: true });
    trainedRows.set(table, rows);
    return 'rebuilt';
  }
  if ((stats?.numUnindexedRows ?? 0) < options.reindexRows) return 'none';
  await table.optimize();
  return 'optimized';
}
