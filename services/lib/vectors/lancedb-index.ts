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

/** Defaults chosen with `npm run bench search` (100,000 × 1792-d frames; see dataprep's README, "Performance"). */
export const DEFAULT_INDEX_OPTIONS: Readonly<LanceDbIndexOptions> = Object.freeze({
  minRows: 10_000,
  reindexRows: 10_000,
  nprobes: 20,
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

/**
 * Scalar indexes made beside the vector index on the columns the search endpoint filters by, when they exist: with
 * them LanceDB evaluates a prefilter from the index instead of scanning the columns (filtered top-10 at 100,000 rows:
 * p50 25 → 16 ms, and 46 → 17 ms for labels + ingest time). Bitmaps for few distinct values, B-trees for ranges and
 * many values, label lists for list columns. optimize keeps them up to date with the vector index.
 */
export const SCALAR_INDEXES: Readonly<Record<string, () => Index>> = Object.freeze({
  m_kind: () => Index.bitmap(),
  m_bucket_name: () => Index.bitmap(),
  m_video_id: () => Index.btree(),
  n_timestamp: () => Index.btree(),
  n_upload_ts: () => Index.btree(),
  tags: () => Index.labelList(),
  l_labels: () => Index.labelList(),
});

async function ensureScalarIndexes(table: Table, indexed: ReadonlySet<string>): Promise<void> {
  const columns = new Set((await table.schema()).fields.map((field) => field.name));
  for (const [column, index] of Object.entries(SCALAR_INDEXES)) {
    if (columns.has(column) && !indexed.has(column)) await table.createIndex(column, { config: index() });
  }
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
    await ensureScalarIndexes(table, new Set(indices.flatMap((index) => index.columns)));
    return 'built';
  }
  // Columns filtered on may appear after the vector index was built (a first list of labels).
  await ensureScalarIndexes(table, new Set(indices.flatMap((index) => index.columns)));
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
