import { connect, type Connection, type Table } from '@lancedb/lancedb';
import { Schema } from 'apache-arrow';
import { KeyedQueue } from '../keyed-queue/index.js';
import { BASE_COLUMNS, columnField, filterValues, recordsToArrow } from './lancedb-batch.js';
import { lanceWhere } from './lancedb-filter.js';
import { DEFAULT_INDEX_OPTIONS, maintainVectorIndex, type LanceDbIndexOptions } from './lancedb-index.js';
import {
  assertValidFilter,
  assertValidK,
  assertValidRecord,
  assertValidVector,
  CANONICAL_FIELDS,
  MATCHES_NOTHING,
  numericFieldName,
  scalarFieldName,
} from './metadata-fields.js';
import {
  unavailableOnError,
  VectorStoreUnavailableError,
  type MetadataValue,
  type VectorFilter,
  type VectorHit,
  type VectorRecord,
  type VectorStore,
} from './vector-store.js';

/** Where and how the embedded table lives. */
export interface LanceDbVectorStoreOptions {
  /** Database directory (created when missing). */
  dir: string;
  table: string;
  dimension: number;
  /**
   * How stale a read may be, in seconds, with respect to other writers (other processes or store instances).
   * Default 0: every read checks for new versions, which costs one manifest lookup on a local disk.
   */
  readConsistencySeconds?: number;
  /** When to build the vector index and how to query it (see LanceDbIndexOptions); defaults suit 1792-d frames. */
  index?: Partial<LanceDbIndexOptions>;
  /** Told when background index maintenance fails (it is retried with back-off); default: ignored. */
  onIndexError?: (error: unknown) => void;
}

/** A partition count no index reaches: LanceDB's maximum nprobes defaults to 20, which would also cap the minimum. */
const EVERY_PARTITION = 1_000_000;

/** Per-search options of the embedded store beyond the VectorStore port. */
export interface LanceDbSearchOptions {
  /** Ignore the vector index and compare with every row (the reference an index's recall is measured against). */
  exact?: boolean;
}

/*
 * Table layout (why): `metadata` holds the record's metadata as JSON, so any shape round-trips exactly. For filtering,
 * every top-level scalar key K also gets a nullable Utf8 column `m_K` holding JSON.stringify(value) – JSON text keeps
 * the type (5 vs "5") in a single column type; a number also goes into a Float64 column `n_K` (range filters); a list
 * goes into a List<Utf8> column `l_K` of JSON-encoded items (`in`, `containsAll`), except `tags`, whose list column is
 * `tags`. Keys seen for the first time get their columns with addColumns. Canonical columns exist from the start.
 */
/** A column present in every table this version creates; a table without it predates numeric columns. */
const NUMERIC_MARKER = numericFieldName('timestamp');

function baseSchema(dimension: number): Schema {
  const filterColumns = Object.entries(CANONICAL_FIELDS).flatMap(([key, kind]) => {
    if (kind === 'string[]') return [];
    return kind === 'string' ? [scalarFieldName(key)] : [scalarFieldName(key), numericFieldName(key)];
  });
  return new Schema([...BASE_COLUMNS, ...filterColumns].map((name) => columnField(name, dimension)));
}

/**
 * VectorStore on an embedded LanceDB table persisted under a directory; cosine similarity. Exact (flat) search on
 * small tables; an IVF-PQ index, built and kept up to date in the background, once the table is large (see
 * LanceDbIndexOptions).
 */
export class LanceDbVectorStore implements VectorStore {
  readonly backend = 'lancedb';
  private columns = new Set<string>();
  /** One write at a time on the table (key: its name), so schema changes and inserts do not interleave. */
  private readonly writes = new KeyedQueue<string>();
  /**
   * Index maintenance in the background, one step at a time, requests coalesced. Inserts and searches never wait
   * for it (LanceDB appends and reads beside an index build); deletes and schema changes, which rewrite what an
   * index build reads, run in its chain.
   */
  private readonly indexing: KeyedQueue<string>;
  private readonly indexOptions: LanceDbIndexOptions;

  private constructor(
    private readonly db: Connection,
    private readonly table: Table,
    private readonly tableName: string,
    readonly dimension: number,
    options: LanceDbVectorStoreOptions,
  ) {
    this.indexOptions = { ...DEFAULT_INDEX_OPTIONS, ...options.index };
    this.indexing = new KeyedQueue<string>({
      handler: async () => {
        await maintainVectorIndex(this.table, this.dimension, this.indexOptions);
      },
      onError: (_key, error) => options.onIndexError?.(error),
    });
  }

  /** Opens (or creates) the table; refuses an existing table whose vectors have another dimension. */
  static async open(options: LanceDbVectorStoreOptions): Promise<LanceDbVectorStore> {
    const { dir, table: name, dimension } = options;
    if (!Number.isSafeInteger(dimension) || dimension < 1) throw new RangeError('dimension must be a positive integer');
    const db = await unavailableOnError('open LanceDB', () =>
      connect(dir, { readConsistencyInterval: options.readConsistencySeconds ?? 0 }),
    );
    const table = await unavailableOnError('open LanceDB table', async () =>
      (await db.tableNames()).includes(name)
        ? db.openTable(name)
        : db.createEmptyTable(name, baseSchema(dimension), { existOk: true }),
    );
    const store = new LanceDbVectorStore(db, table, name, dimension, options);
    const existing = await store.refreshColumns();
    const vectorField = existing.fields.find((field) => field.name === 'vector');
    const actual = (vectorField?.type as { listSize?: number } | undefined)?.listSize;
    if (actual !== dimension) {
      table.close();
      db.close();
      throw new RangeError(`table ${name} holds vectors of dimension ${actual}, configured ${dimension}`);
    }
    if (!store.columns.has(NUMERIC_MARKER)) await store.write(() => store.addNumericColumns());
    store.indexing.enqueue(name);
    return store;
  }

  async insert(records: VectorRecord[]): Promise<void> {
    if (records.length === 0) return;
    for (const record of records) assertValidRecord(record, this.dimension);
    const filters = records.map((record) => filterValues(record));
    const wanted = new Set(filters.flatMap((values) => [...values.keys()]));
    await this.write(async () => {
      await this.ensureColumns([...wanted].filter((c) => !BASE_COLUMNS.includes(c)));
      const batch = recordsToArrow(records, filters, [...this.columns], this.dimension);
      await unavailableOnError('insert into LanceDB', () => this.table.add(batch));
    });
    this.indexing.enqueue(this.tableName);
  }

  async search(
    vector: Float32Array | number[],
    k: number,
    filter?: VectorFilter,
    options: LanceDbSearchOptions = {},
  ): Promise<VectorHit[]> {
    assertValidVector(vector, this.dimension);
    assertValidK(k);
    const where = await this.whereFor(filter);
    if (where === MATCHES_NOTHING) return [];
    const rows = await unavailableOnError('search LanceDB', () => {
      let query = this.table
        .vectorSearch(Array.from(vector))
        .distanceType('cosine')
        .select(['id', 'metadata', '_distance'])
        .limit(k);
      // Without an index LanceDB ignores these; rows not in the index yet are searched exactly beside it. Only the
      // minimum of partitions is set: under a narrow filter LanceDB probes more until it has k rows.
      query = options.exact
        ? query.bypassVectorIndex()
        : query
            .maximumNprobes(EVERY_PARTITION)
            .minimumNprobes(this.indexOptions.nprobes)
            .refineFactor(this.indexOptions.refineFactor);
      if (where) query = query.where(where);
      return query.toArray();
    });
    return rows.map((row: { id: string; metadata: string; _distance: number }) => ({
      id: row.id,
      score: 1 - row._distance,
      metadata: JSON.parse(row.metadata) as Record<string, MetadataValue>,
    }));
  }

  async delete(filter: VectorFilter): Promise<number> {
    assertValidFilter(filter);
    return this.structural(async () => {
      const where = await this.whereFor(filter);
      if (where === MATCHES_NOTHING) return 0;
      const predicate = where ?? 'true';
      return unavailableOnError('delete from LanceDB', async () => {
        const before = await this.table.countRows(where);
        const result = (await this.table.delete(predicate)) as { numDeletedRows?: number } | undefined;
        return typeof result?.numDeletedRows === 'number' ? result.numDeletedRows : before;
      });
    });
  }

  async count(filter?: VectorFilter): Promise<number> {
    const where = await this.whereFor(filter);
    if (where === MATCHES_NOTHING) return 0;
    return unavailableOnError('count LanceDB rows', () => this.table.countRows(where));
  }

  async health(): Promise<'ok'> {
    await unavailableOnError('LanceDB health', () => this.table.countRows());
    return 'ok';
  }

  /** Resolves once the index maintenance asked for so far has run (tests and benchmarks wait for the index). */
  async indexSettled(): Promise<void> {
    await this.indexing.run(this.tableName, async () => undefined);
  }

  /**
   * Lets the writes under way finish (later ones are refused), then closes the table. An index build under way is
   * not waited for: it cannot be cancelled, may take minutes on a large table, and a build cut short leaves the table
   * as it was (LanceDB commits an index atomically); the next open starts it again.
   */
  async close(): Promise<void> {
    await this.writes.close();
    void this.indexing.close();
    this.table.close();
    this.db.close();
  }

  private write<T>(action: () => Promise<T>): Promise<T> {
    return this.writes.run(this.tableName, action);
  }

  /** A write that rewrites existing data or the schema: also waits for index maintenance, and it for the write. */
  private structural<T>(action: () => Promise<T>): Promise<T> {
    return this.write(() => this.indexing.run(this.tableName, action));
  }

  /**
   * The SQL predicate; a column unknown here may have been added by another writer, so look once more before
   * answering "nothing" for `equals` and, because a missing `notEquals` column widens the match, before building one.
   */
  private async whereFor(filter: VectorFilter | undefined): Promise<string | undefined | typeof MATCHES_NOTHING> {
    const unknownNotEquals = Object.keys(filter?.notEquals ?? {}).some(
      (key) => !this.columns.has(scalarFieldName(key)),
    );
    if (unknownNotEquals) await this.refreshColumns();
    const where = lanceWhere(filter, this.columns);
    if (where !== MATCHES_NOTHING || unknownNotEquals) return where;
    await this.refreshColumns();
    return lanceWhere(filter, this.columns);
  }

  private async refreshColumns(): Promise<Schema> {
    const schema = await unavailableOnError('read LanceDB schema', () => this.table.schema());
    this.columns = new Set(schema.fields.map((field) => field.name));
    return schema;
  }

  private async ensureColumns(names: string[]): Promise<void> {
    let missing = names.filter((name) => !this.columns.has(name));
    if (missing.length === 0) return;
    // Another process may have added them since we last looked.
    await this.refreshColumns();
    missing = missing.filter((name) => !this.columns.has(name));
    if (missing.length === 0) return;
    try {
      const fields = missing.map((name) => columnField(name, this.dimension));
      await this.indexing.run(this.tableName, () => this.table.addColumns(fields));
    } catch (err) {
      // Another writer may have added the same columns first: fine, as long as they exist now.
      await this.refreshColumns();
      if (missing.some((name) => !this.columns.has(name))) {
        throw new VectorStoreUnavailableError(`add LanceDB columns failed: ${(err as Error)?.message}`, { cause: err });
      }
      return;
    }
    await this.refreshColumns();
  }

  /**
   * Upgrades a table written before range filters: every `m_*` column gets its `n_*` twin, filled from the JSON text
   * (numbers parse, JSON strings and booleans become NULL), so records stored earlier match ranges at once. List
   * user keys of earlier records only sit in `metadata`; they become filterable when those records are written again.
   */
  private async addNumericColumns(): Promise<void> {
    const twins = [...this.columns]
      .filter((name) => name.startsWith('m_') || name.startsWith('mx_'))
      .map((name) => ({ name: `n${name.slice(1)}`, valueSql: `TRY_CAST(${name} AS DOUBLE)` }))
      .filter(({ name }) => !this.columns.has(name));
    try {
      await this.table.addColumns(twins);
    } catch (err) {
      // Another process may have upgraded the table first.
      await this.refreshColumns();
      if (!this.columns.has(NUMERIC_MARKER)) {
        throw new VectorStoreUnavailableError(`upgrade LanceDB table failed: ${(err as Error)?.message}`, {
          cause: err,
        });
      }
      return;
    }
    await this.refreshColumns();
  }
}
