import type { LanceDbIndexOptions } from './lancedb-index.js';
import { LanceDbVectorStore } from './lancedb-store.js';
import type { VectorStore } from './vector-store.js';
import { connectWeaviate, WeaviateVectorStore } from './weaviate-store.js';

export {
  VectorStoreUnavailableError,
  type FilterScalar,
  type MetadataValue,
  type VectorFilter,
  type VectorHit,
  type VectorRecord,
  type VectorStore,
} from './vector-store.js';
export { CANONICAL_FIELDS, type CanonicalKind } from './metadata-fields.js';
export { LanceDbVectorStore, type LanceDbSearchOptions, type LanceDbVectorStoreOptions } from './lancedb-store.js';
export { DEFAULT_INDEX_OPTIONS, type LanceDbIndexOptions } from './lancedb-index.js';
export {
  connectWeaviate,
  WeaviateVectorStore,
  type WeaviateAggregatorApi,
  type WeaviateClientApi,
  type WeaviateCollectionApi,
  type WeaviateConnectionOptions,
  type WeaviateVectorStoreOptions,
} from './weaviate-store.js';

/** Which vector store to build: embedded LanceDB or a Weaviate server. */
export type VectorStoreConfig =
  | {
      backend: 'lancedb';
      dir: string;
      table: string;
      dimension: number;
      index?: Partial<LanceDbIndexOptions>;
      /** Told when a background index build or merge fails (it is retried later). */
      onIndexError?: (error: unknown) => void;
    }
  | { backend: 'weaviate'; url: string; grpcUrl?: string; apiKey?: string; collection: string; dimension: number };

/** Opens the configured VectorStore adapter (creating its table or collection when missing). */
export async function createVectorStore(config: VectorStoreConfig): Promise<VectorStore> {
  switch (config.backend) {
    case 'lancedb':
      return LanceDbVectorStore.open({
        dir: config.dir,
        table: config.table,
        dimension: config.dimension,
        index: config.index,
        onIndexError: config.onIndexError,
      });
    case 'weaviate': {
      const client = await connectWeaviate({ url: config.url, grpcUrl: config.grpcUrl, apiKey: config.apiKey });
      return WeaviateVectorStore.open({ client, collection: config.collection, dimension: config.dimension });
    }
  }
}

/** Where a service keeps its vector tables: a LanceDB directory or a Weaviate server, without naming a table. */
export type VectorBackendConfig =
  { backend: 'lancedb'; dir: string } | { backend: 'weaviate'; url: string; grpcUrl?: string; apiKey?: string };

/**
 * Opens the table (LanceDB) or collection (Weaviate) named `table` on `backend`; `onIndexError` reaches LanceDB's
 * background index builds (Weaviate indexes on its own).
 */
export function openVectorTable(
  backend: VectorBackendConfig,
  table: string,
  dimension: number,
  onIndexError?: (error: unknown) => void,
): Promise<VectorStore> {
  return backend.backend === 'lancedb'
    ? createVectorStore({ backend: 'lancedb', dir: backend.dir, table, dimension, onIndexError })
    : createVectorStore({
        backend: 'weaviate',
        url: backend.url,
        grpcUrl: backend.grpcUrl,
        apiKey: backend.apiKey,
        collection: table,
        dimension,
      });
}
