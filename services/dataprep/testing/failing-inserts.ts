import { VectorStoreUnavailableError, type VectorStore } from '../../lib/vectors/index.js';

/** `store` with inserts that fail as an unreachable database would; everything else reaches `store`. */
export function failingInserts(store: VectorStore): VectorStore {
  return {
    backend: store.backend,
    insert: async () => {
      throw new VectorStoreUnavailableError('connection refused');
    },
    search: (...args) => store.search(...args),
    delete: (filter) => store.delete(filter),
    count: (filter) => store.count(filter),
    health: () => store.health(),
    close: async () => undefined,
  };
}
