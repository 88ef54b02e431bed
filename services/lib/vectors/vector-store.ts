/** A scalar or list of scalars: the values a metadata field may hold (filterable). */
export type MetadataValue = string | number | boolean | null | Array<string | number | boolean>;

/** One stored embedding with its canonical metadata (see README, "Embedding metadata"). */
export interface VectorRecord {
  id: string;
  vector: Float32Array | number[];
  metadata: Record<string, MetadataValue>;
}

/** A value a list-aware filter (`in`, `containsAll`) compares with: a scalar, matched with its type. */
export type FilterScalar = string | number | boolean;

/**
 * Filter on metadata: every listed condition must hold (AND). `{}` matches every record.
 *
 * - `equals` compares top-level scalars exactly (type included: 5 does not match '5').
 * - `notEquals` is its negation; a record without the field (or with another type) matches it, since its value differs.
 * - `tagsAny` matches records whose `tags` list contains at least one of the given tags; an empty `tagsAny` does not
 *   restrict.
 * - `range` matches records whose field holds a number within the inclusive bounds (`gte`, `lte`, either optional;
 *   `{}` asks only that the field holds a number). Records without the field, or with a non-number, do not match.
 * - `in` matches a scalar field equal to one of the values, or a list field containing at least one of them (type
 *   included). An empty list matches nothing.
 * - `containsAll` matches a list field containing every one of the values (type included); a scalar field never
 *   matches. An empty list does not restrict.
 */
export interface VectorFilter {
  equals?: Record<string, FilterScalar>;
  notEquals?: Record<string, FilterScalar>;
  tagsAny?: string[];
  range?: Record<string, { gte?: number; lte?: number }>;
  in?: Record<string, FilterScalar[]>;
  containsAll?: Record<string, FilterScalar[]>;
}

/** One search hit: the record's metadata and its cosine similarity to the query (1 = identical direction). */
export interface VectorHit {
  id: string;
  score: number;
  metadata: Record<string, MetadataValue>;
}

/** Raised when the vector database fails (connection, server error). */
export class VectorStoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VectorStoreUnavailableError';
  }
}

/** Runs a backend call, turning any failure into VectorStoreUnavailableError (kept as is when it already is one). */
export async function unavailableOnError<T>(what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (err) {
    if (err instanceof VectorStoreUnavailableError) throw err;
    throw new VectorStoreUnavailableError(`${what} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }
}

/** Port for the vector database. One store holds one collection of fixed dimension. */
export interface VectorStore {
  /** Backend name reported by health: `lancedb` or `weaviate`. */
  readonly backend: string;
  /** Inserts a batch; all records share the store's dimension. */
  insert(records: VectorRecord[]): Promise<void>;
  /** Top-k by cosine similarity, restricted by `filter`. */
  search(vector: Float32Array | number[], k: number, filter?: VectorFilter): Promise<VectorHit[]>;
  /** Deletes every record matching `filter`; returns how many were deleted. */
  delete(filter: VectorFilter): Promise<number>;
  /** Counts records matching `filter` (all when omitted). */
  count(filter?: VectorFilter): Promise<number>;
  /** `ok` when reachable, otherwise throws VectorStoreUnavailableError. */
  health(): Promise<'ok'>;
  close(): Promise<void>;
}
