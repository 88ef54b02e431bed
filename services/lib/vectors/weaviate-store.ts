import weaviate, { generateUuid5, weaviateV2, type FilterValue } from 'weaviate-client';
import {
  assertValidFilter,
  assertValidK,
  assertValidRecord,
  assertValidVector,
  CANONICAL_FIELDS,
  MATCHES_NOTHING,
  scalarFieldName,
} from './metadata-fields.js';
import {
  collectionProperties,
  dynamicProperty,
  dynamicPropertyNames,
  everyObject,
  fromProperties,
  namesUnknownUserKeys,
  toProperties,
  weaviateFilter,
  type WeaviatePropertyDefinition,
} from './weaviate-mapping.js';
import { graphQLWhere, type GraphQLWhere } from './weaviate-where.js';
import {
  unavailableOnError,
  VectorStoreUnavailableError,
  type VectorFilter,
  type VectorHit,
  type VectorRecord,
  type VectorStore,
} from './vector-store.js';
import { processUserAgent } from '../user-agent/index.js';

/** One object as `data.insertMany` takes it. */
export interface WeaviateObject {
  id: string;
  properties: Record<string, unknown>;
  vectors: number[];
}

/** The calls of a weaviate-client v3 collection this adapter makes (`client.collections.get(name)` provides them). */
export interface WeaviateCollectionApi {
  data: {
    insertMany(objects: WeaviateObject[]): Promise<{ hasErrors: boolean; errors: Record<number, { message: string }> }>;
    deleteMany(where: FilterValue): Promise<{ successful: number; failed: number; matches: number }>;
  };
  query: {
    nearVector(
      vector: number[],
      options: { limit: number; filters?: FilterValue; returnMetadata: ['distance'] },
    ): Promise<{
      objects: Array<{ uuid: string; properties: Record<string, unknown>; metadata?: { distance?: number } }>;
    }>;
  };
  config: {
    get(): Promise<{ properties: Array<{ name: string; dataType: string }> }>;
    addProperty(property: WeaviatePropertyDefinition): Promise<void>;
  };
}

/** The calls of weaviate-client's GraphQL Aggregate builder (`weaviateV2.client(…).graphql.aggregate()`) counts make. */
export interface WeaviateAggregatorApi {
  withClassName(name: string): this;
  withFields(fields: 'meta { count }'): this;
  withWhere(where: GraphQLWhere): this;
  do(): Promise<{ data: { Aggregate: Record<string, Array<{ meta: { count: number } }>> } }>;
}

/**
 * The calls of weaviate-client v3 this adapter makes: a `WeaviateClient`'s, and GraphQL Aggregate from the same
 * package's GraphQL client (connectWeaviate joins them).
 */
export interface WeaviateClientApi {
  isReady(): Promise<boolean>;
  close(): Promise<void>;
  collections: {
    exists(name: string): Promise<boolean>;
    create(config: { name: string; properties: WeaviatePropertyDefinition[]; vectorizers: unknown }): Promise<unknown>;
    get(name: string): WeaviateCollectionApi;
  };
  graphql: { aggregate(): WeaviateAggregatorApi };
}

/** Options of WeaviateVectorStore.open. */
export interface WeaviateVectorStoreOptions {
  client: WeaviateClientApi;
  collection: string;
  dimension: number;
  /** The server's QUERY_MAXIMUM_RESULTS: deleteMany removes at most this many per call. Default 10000. */
  deletePageSize?: number;
}

/** Connection settings for a Weaviate server (REST on `url`, gRPC on `grpcUrl`, default same host port 50051). */
export interface WeaviateConnectionOptions {
  url: string;
  grpcUrl?: string;
  apiKey?: string;
}

/** Objects per insertMany call: keeps each gRPC batch message well below server limits. */
export const INSERT_BATCH = 200;
/** Weaviate's default QUERY_MAXIMUM_RESULTS: the most objects one deleteMany removes. */
export const DELETE_PAGE = 10_000;

/** VectorStore on a Weaviate collection (vectors supplied by us, cosine HNSW). The client is injected. */
export class WeaviateVectorStore implements VectorStore {
  readonly backend = 'weaviate';
  /** The collection's properties and their declared data types, as last read from its config. */
  private properties = new Map<string, string>();

  private constructor(
    private readonly client: WeaviateClientApi,
    private readonly collection: WeaviateCollectionApi,
    readonly collectionName: string,
    readonly dimension: number,
    private readonly deletePageSize: number,
  ) {}

  /** Uses the collection, creating it (with the canonical properties) when missing. */
  static async open(options: WeaviateVectorStoreOptions): Promise<WeaviateVectorStore> {
    const { client, collection: name, dimension } = options;
    if (!Number.isSafeInteger(dimension) || dimension < 1) throw new RangeError('dimension must be a positive integer');
    await unavailableOnError(`prepare collection ${name}`, async () => {
      if (await client.collections.exists(name)) return;
      try {
        await client.collections.create({
          name,
          properties: collectionProperties(),
          // The vector index is Weaviate's HNSW with its defaults (dynamic ef, efConstruction 128), cosine: ANN from
          // the first object on, so nothing here decides when to index. Filters become an allow-list the HNSW
          // search keeps to; a filter matching fewer objects than the server's flatSearchCutoff (40,000 by default)
          // is answered by a flat scan of those objects instead, which is exact.
          vectorizers: weaviate.configure.vectors.selfProvided({
            vectorIndexConfig: weaviate.configure.vectorIndex.hnsw({ distanceMetric: 'cosine' }),
          }),
        });
      } catch (err) {
        // Another replica may have created it between exists and create.
        if (!(await client.collections.exists(name))) throw err;
      }
    });
    const store = new WeaviateVectorStore(
      client,
      client.collections.get(name),
      name,
      dimension,
      options.deletePageSize ?? DELETE_PAGE,
    );
    await store.refreshProperties();
    return store;
  }

  async insert(records: VectorRecord[]): Promise<void> {
    if (records.length === 0) return;
    for (const record of records) assertValidRecord(record, this.dimension);
    await this.ensureProperties(new Set(records.flatMap((record) => dynamicPropertyNames(record))));
    for (let i = 0; i < records.length; i += INSERT_BATCH) {
      const objects = records.slice(i, i + INSERT_BATCH).map((record): WeaviateObject => ({
        id: generateUuid5(record.id),
        properties: toProperties(record),
        vectors: Array.from(record.vector),
      }));
      const result = await unavailableOnError('insert into Weaviate', () => this.collection.data.insertMany(objects));
      if (result.hasErrors) {
        const first = Object.values(result.errors)[0];
        throw new VectorStoreUnavailableError(
          `Weaviate rejected ${Object.keys(result.errors).length} object(s): ${first?.message ?? 'unknown error'}`,
        );
      }
    }
  }

  async search(vector: Float32Array | number[], k: number, filter?: VectorFilter): Promise<VectorHit[]> {
    assertValidVector(vector, this.dimension);
    assertValidK(k);
    const filters = await this.filterFor(filter);
    if (filters === MATCHES_NOTHING) return [];
    const result = await unavailableOnError('search Weaviate', () =>
      this.collection.query.nearVector(Array.from(vector), {
        limit: k,
        ...(filters ? { filters } : {}),
        returnMetadata: ['distance'],
      }),
    );
    return result.objects.map((object) => ({
      id: String(object.properties.record_id ?? object.uuid),
      score: 1 - (object.metadata?.distance ?? 1),
      metadata: fromProperties(object.properties),
    }));
  }

  async delete(filter: VectorFilter): Promise<number> {
    assertValidFilter(filter);
    const filters = await this.filterFor(filter);
    if (filters === MATCHES_NOTHING) return 0;
    const where = filters ?? everyObject();
    let deleted = 0;
    for (;;) {
      const result = await unavailableOnError('delete from Weaviate', () => this.collection.data.deleteMany(where));
      if (result.failed > 0) {
        throw new VectorStoreUnavailableError(`Weaviate failed to delete ${result.failed} object(s)`);
      }
      deleted += result.successful;
      // A full page means more may match: the server stops at its query limit, so ask again.
      if (result.matches < this.deletePageSize || result.successful === 0) return deleted;
    }
  }

  async count(filter?: VectorFilter): Promise<number> {
    const filters = await this.filterFor(filter);
    if (filters === MATCHES_NOTHING) return 0;
    // Counting is GraphQL Aggregate. collection.aggregate.overAll would name each value's field from its JavaScript
    // type (valueInt for an integral bound on a number property, which the server refuses); GraphQL's builder takes
    // a `where` typed by the collection schema instead. Class names are capitalized, as weaviate-client's
    // collections.get does with a collection name.
    const className = this.collectionName.charAt(0).toUpperCase() + this.collectionName.slice(1);
    const result = await unavailableOnError('count Weaviate objects', () => {
      const query = this.client.graphql.aggregate().withClassName(className).withFields('meta { count }');
      const where = filters && graphQLWhere(filters, (property) => this.declaredType(property));
      return (where ? query.withWhere(where) : query).do();
    });
    return result.data.Aggregate[className][0].meta.count;
  }

  async health(): Promise<'ok'> {
    const ready = await unavailableOnError('Weaviate health', () => this.client.isReady());
    if (!ready) throw new VectorStoreUnavailableError('Weaviate is not ready');
    return 'ok';
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /**
   * Builds the filter; a key unknown here may have been added by another replica, so look once more before answering
   * "none" and, because an unknown `notEquals` key widens the match, before building one.
   */
  private async filterFor(filter: VectorFilter | undefined): Promise<FilterValue | undefined | typeof MATCHES_NOTHING> {
    const unknown = (key: string) => !CANONICAL_FIELDS[key] && !this.properties.has(scalarFieldName(key));
    if (Object.keys(filter?.notEquals ?? {}).some(unknown)) await this.refreshProperties();
    const built = weaviateFilter(filter, this.properties);
    if (built !== MATCHES_NOTHING || !namesUnknownUserKeys(filter, this.properties)) return built;
    await this.refreshProperties();
    return weaviateFilter(filter, this.properties);
  }

  private async refreshProperties(): Promise<void> {
    const config = await unavailableOnError('read collection config', () => this.collection.config.get());
    this.properties = new Map(config.properties.map((property) => [property.name, property.dataType]));
  }

  private declaredType(property: string): string {
    const dataType = this.properties.get(property);
    if (!dataType)
      throw new VectorStoreUnavailableError(`collection ${this.collectionName} has no property ${property}`);
    return dataType;
  }

  private async ensureProperties(names: Set<string>): Promise<void> {
    let missing = [...names].filter((name) => !this.properties.has(name));
    if (missing.length === 0) return;
    await this.refreshProperties();
    missing = missing.filter((name) => !this.properties.has(name));
    for (const name of missing) {
      await unavailableOnError(`add property ${name}`, async () => {
        try {
          await this.collection.config.addProperty(dynamicProperty(name));
        } catch (err) {
          await this.refreshProperties();
          if (!this.properties.has(name)) throw err;
        }
      });
      this.properties.set(name, dynamicProperty(name).dataType);
    }
  }
}

/** Connects a weaviate-client v3 client to `url` (REST) and its gRPC port, with its GraphQL client for counts. */
export async function connectWeaviate(options: WeaviateConnectionOptions): Promise<WeaviateClientApi> {
  const http = new URL(options.url);
  const grpc = options.grpcUrl ? new URL(options.grpcUrl) : undefined;
  const httpSecure = http.protocol === 'https:';
  const client = await unavailableOnError('connect to Weaviate', () =>
    weaviate.connectToCustom({
      httpHost: http.hostname,
      httpPort: Number(http.port || (httpSecure ? 443 : 80)),
      httpSecure,
      httpPath: http.pathname === '/' ? undefined : http.pathname,
      grpcHost: grpc?.hostname ?? http.hostname,
      grpcPort: Number(grpc?.port || (grpc ? (grpc.protocol === 'https:' ? 443 : 80) : 50051)),
      grpcSecure: grpc ? grpc.protocol === 'https:' : httpSecure,
      ...(options.apiKey ? { authCredentials: new weaviate.ApiKey(options.apiKey) } : {}),
      headers: { 'User-Agent': processUserAgent() },
    }),
  );
  const { graphql } = weaviateV2.client({
    host: options.url,
    headers: { 'User-Agent': processUserAgent() },
    ...(options.apiKey ? { apiKey: new weaviateV2.ApiKey(options.apiKey) } : {}),
  });
  const api = {
    isReady: () => client.isReady(),
    close: () => client.close(),
    collections: client.collections,
    graphql,
  };
  return api as unknown as WeaviateClientApi;
}
