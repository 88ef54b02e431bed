import type { FilterValue } from 'weaviate-client';
import type { WeaviatePropertyDefinition } from '../weaviate-mapping.js';
import {
  DELETE_PAGE,
  type WeaviateAggregatorApi,
  type WeaviateClientApi,
  type WeaviateCollectionApi,
  type WeaviateObject,
} from '../weaviate-store.js';
import type { GraphQLWhere } from '../weaviate-where.js';

/** An object as a shard holds it: the doc id its inverted index rows point to, its properties and vector. */
interface StoredObject {
  docId: number;
  properties: Record<string, unknown>;
  vector: number[];
}

/** One collection (one shard): its schema, its objects by uuid and the shard's doc id counter. */
interface FakeCollection {
  properties: WeaviatePropertyDefinition[];
  objects: Map<string, StoredObject>;
  nextDocId: number;
}

/** A filter clause as the server holds it after parsing (entities/filters Clause): a typed value on a property. */
interface Clause {
  operator: string;
  operands?: Clause[];
  property?: string;
  value?: unknown;
}

const BASE_TYPE_OF_FIELD: Record<string, string> = {
  valueText: 'text',
  valueInt: 'int',
  valueNumber: 'number',
  valueBoolean: 'boolean',
  valueDate: 'date',
};

/**
 * An in-memory stand-in for a Weaviate 1.27 server behind the weaviate-client 3.x calls the adapter makes. It records
 * every call and behaves like the server where the adapter depends on it (read from Weaviate's source, v1.27.27):
 *
 * - Unknown properties are refused (auto-schema off).
 * - Filter values are typed by the property's declared data type. Over GraphQL (Aggregate, `count`) the value's field
 *   must be the one of that type — `valueInt` on a `number` property is refused with the server's message
 *   (entities/filters/filters_validator.go, wrapped by usecases/traverser/traverser_aggregate.go). Over gRPC
 *   (nearVector, deleteMany) weaviate-client names the field from the JavaScript value (an integral number is
 *   `valueInt`, a list mixing integral and fractional numbers gets no field) and the server converts integral values
 *   for `number` properties and integral floats for `int` ones, refusing fractional ones
 *   (adapters/handlers/grpc/v1/filters.go). Any other mismatch of value and property type is refused too (a guard of
 *   the fake, not a message of the server).
 * - NotEqual is the complement of Equal over every doc id the shard has handed out — objects without the property
 *   match, and so do doc ids of deleted or re-written objects (roaringset BitmapFactory, row_reader_roaring_set.go).
 *   An Aggregate count is the size of that allow list (aggregator/filtered.go); nearVector and deleteMany only see
 *   objects that exist (shard_write_batch_delete.go skips doc ids without an object). And intersects, Or unites.
 * - Equal, GreaterThanEqual, LessThanEqual, ContainsAny, ContainsAll (a scalar property taken as a one-item list, as
 *   with field-tokenized text) and Like '*' are evaluated on the objects that hold the property.
 * - A put of an existing uuid keeps its doc id when the vector is unchanged and takes a new one otherwise
 *   (shard_write_put.go); deleteMany reports every match and deletes at most `deletePage` of them (db/batch.go).
 * - nearVector ranks by cosine distance.
 * - Collection names are class names, capitalized by weaviate-client's collections calls and by the server; GraphQL
 *   Aggregate knows only the capitalized name.
 */
export class FakeWeaviate implements WeaviateClientApi {
  readonly calls: Array<{ op: string; args: unknown[] }> = [];
  private readonly collectionsByName = new Map<string, FakeCollection>();
  ready = true;
  failNext?: Error;
  deletePage = DELETE_PAGE;

  /** Declares a collection as if another process had created it. */
  addCollection(name: string, properties: WeaviatePropertyDefinition[]): void {
    this.collectionsByName.set(className(name), { properties: [...properties], objects: new Map(), nextDocId: 0 });
  }

  /** The properties a collection declares (tests may change them to simulate a server that lost its schema). */
  schemaOf(name: string): WeaviatePropertyDefinition[] {
    return this.stored(name).properties;
  }

  /** The number of objects a collection holds, seen from outside any filter. */
  objectCount(name: string): number {
    return this.stored(name).objects.size;
  }

  callsOf(op: string): unknown[][] {
    return this.calls.filter((call) => call.op === op).map((call) => call.args);
  }

  async isReady(): Promise<boolean> {
    this.record('isReady');
    return this.ready;
  }

  async close(): Promise<void> {
    this.record('close');
  }

  readonly collections = {
    exists: async (name: string) => {
      this.record('exists', name);
      return this.collectionsByName.has(className(name));
    },
    create: async (config: { name: string; properties: WeaviatePropertyDefinition[]; vectorizers: unknown }) => {
      this.record('create', config);
      this.addCollection(config.name, config.properties);
    },
    get: (name: string): WeaviateCollectionApi => this.collection(name),
  };

  readonly graphql = {
    aggregate: (): WeaviateAggregatorApi => {
      let queried = '';
      let where: GraphQLWhere | undefined;
      const query: WeaviateAggregatorApi = {
        withClassName: (name: string) => ((queried = name), query),
        withFields: () => query,
        withWhere: (filter: GraphQLWhere) => ((where = filter), query),
        do: async () => {
          this.record('graphql.aggregate', queried, where);
          // GraphQL's Aggregate fields are the (capitalized) class names (graphql/local/aggregate/aggregate.go).
          if (!this.collectionsByName.has(queried)) {
            throw new Error(`Cannot query field "${queried}" on type "AggregateObjectsObj".`);
          }
          const count = where
            ? this.allowList(queried, this.fromGraphQL(queried, where)).size
            : this.stored(queried).objects.size;
          return { data: { Aggregate: { [queried]: [{ meta: { count } }] } } };
        },
      };
      return query;
    },
  };

  private record(op: string, ...args: unknown[]): void {
    this.calls.push({ op, args: structuredClone(args) });
    const failure = this.failNext;
    this.failNext = undefined;
    if (failure) throw failure;
  }

  private stored(name: string): FakeCollection {
    const collection = this.collectionsByName.get(className(name));
    if (!collection) throw new Error(`class ${name} not found`);
    return collection;
  }

  private collection(name: string): WeaviateCollectionApi {
    return {
      data: {
        insertMany: async (batch: WeaviateObject[]) => {
          this.record('insertMany', batch);
          const errors: Record<number, { message: string }> = {};
          batch.forEach((object, index) => {
            const unknown = Object.keys(object.properties).find((p) => !this.declaredType(name, p, false));
            if (unknown) errors[index] = { message: `no such prop with name '${unknown}'` };
            else this.put(name, object);
          });
          return { hasErrors: Object.keys(errors).length > 0, errors };
        },
        deleteMany: async (where: FilterValue) => {
          this.record('deleteMany', where);
          const objects = this.stored(name).objects;
          const hits = this.existingMatches(name, this.fromGrpc(name, where));
          const deleted = hits.slice(0, this.deletePage);
          for (const [uuid] of deleted) objects.delete(uuid);
          return { successful: deleted.length, failed: 0, matches: hits.length };
        },
      },
      query: {
        nearVector: async (vector: number[], options: { limit: number; filters?: FilterValue }) => {
          this.record('nearVector', vector, options);
          const candidates = options.filters
            ? this.existingMatches(name, this.fromGrpc(name, options.filters))
            : [...this.stored(name).objects];
          const ranked = candidates
            .map(([uuid, object]) => ({
              uuid,
              properties: structuredClone(object.properties),
              metadata: { distance: 1 - cosine(vector, object.vector) },
            }))
            .sort((a, b) => a.metadata.distance - b.metadata.distance);
          return { objects: ranked.slice(0, options.limit) };
        },
      },
      config: {
        get: async () => {
          this.record('config.get');
          return { properties: this.schemaOf(name).map((p) => ({ name: p.name, dataType: p.dataType })) };
        },
        addProperty: async (property: WeaviatePropertyDefinition) => {
          this.record('addProperty', property);
          if (this.declaredType(name, property.name, false))
            throw new Error(`property ${property.name} already exists`);
          this.schemaOf(name).push(property);
        },
      },
    };
  }

  private put(name: string, object: WeaviateObject): void {
    const collection = this.stored(name);
    const previous = collection.objects.get(object.id);
    const sameVector =
      previous?.vector.length === object.vectors.length && previous.vector.every((v, i) => v === object.vectors[i]);
    const docId = previous && sameVector ? previous.docId : collection.nextDocId++;
    collection.objects.set(object.id, { docId, properties: { ...object.properties }, vector: [...object.vectors] });
  }

  /** The data type a property is declared with, or undefined (`required`: refuse an unknown one as the server does). */
  private declaredType(name: string, property: string, required = true): string | undefined {
    const dataType = this.schemaOf(name).find((p) => p.name === property)?.dataType;
    if (!dataType && required) throw new Error(`no such prop with name '${property}' found in class '${name}'`);
    return dataType;
  }

  /**
   * Parses a GraphQL `where` as the server does: each value's field must be the property's (base) type's, otherwise
   * `invalid 'where' filter: data type filter cannot use "valueInt" on type "number", use "valueNumber" instead`;
   * errors of And/Or operands are named by position and joined.
   */
  private fromGraphQL(name: string, where: GraphQLWhere): Clause {
    const parse = (filter: GraphQLWhere): Clause => {
      if ('operands' in filter) {
        const errors: string[] = [];
        const operands = filter.operands.map((operand, i) => {
          try {
            return parse(operand);
          } catch (err) {
            errors.push(`child operand at position ${i}: ${(err as Error).message}`);
            return { operator: 'invalid' };
          }
        });
        if (errors.length > 0) throw new Error(errors.join(', '));
        return { operator: filter.operator, operands };
      }
      const property = filter.path[0];
      const dataType = this.declaredType(name, property)!;
      const valueField = Object.keys(filter).find((key) => key.startsWith('value')) as keyof typeof filter;
      const field = String(valueField).replace(/Array$/, '');
      const baseType = dataType.replace(/\[\]$/, '');
      if (BASE_TYPE_OF_FIELD[field] !== baseType) {
        throw new Error(
          `data type filter cannot use "${field}" on type "${dataType}", use "value${baseType[0].toUpperCase()}${baseType.slice(1)}" instead`,
        );
      }
      return { operator: filter.operator, property, value: filter[valueField] };
    };
    try {
      return parse(where);
    } catch (err) {
      throw new Error(`invalid 'where' filter: ${(err as Error).message}`);
    }
  }

  /**
   * Parses a filter sent over gRPC: weaviate-client picks the value's field from the JavaScript value
   * (serialize/index.js), the server takes the property's declared type and converts integral values
   * (adapters/handlers/grpc/v1/filters.go).
   */
  private fromGrpc(name: string, filter: FilterValue): Clause {
    if (filter.operator === 'And' || filter.operator === 'Or') {
      return { operator: filter.operator, operands: (filter.filters ?? []).map((f) => this.fromGrpc(name, f)) };
    }
    const property = (filter.target as { property: string }).property;
    const baseType = this.declaredType(name, property)!.replace(/\[\]$/, '');
    const field = clientFieldOf(filter.value);
    if (!field) throw new Error(`unknown value type ${JSON.stringify(filter.value)}`);
    const values: unknown[] = Array.isArray(filter.value) ? filter.value : [filter.value];
    if (baseType === 'int' && values.some((v) => typeof v === 'number' && !Number.isInteger(v))) {
      throw new Error(`filtering for integer, but received a floating point number ${filter.value}`);
    }
    const sentType = BASE_TYPE_OF_FIELD[field.replace(/Array$/, '')];
    const numeric = (type: string) => type === 'int' || type === 'number';
    if (sentType !== baseType && !(numeric(sentType) && numeric(baseType))) {
      throw new Error(`fake: the server cannot compare a ${field} with the ${baseType} property ${property}`);
    }
    return { operator: filter.operator, property, value: filter.value };
  }

  /** Doc ids a clause allows, as the inverted index computes them (NotEqual over every doc id handed out). */
  private allowList(name: string, clause: Clause): Set<number> {
    const collection = this.stored(name);
    if (clause.operator === 'And' || clause.operator === 'Or') {
      const sets = (clause.operands ?? []).map((operand) => this.allowList(name, operand));
      if (clause.operator === 'Or') return new Set(sets.flatMap((set) => [...set]));
      return new Set([...sets[0]].filter((id) => sets.every((set) => set.has(id))));
    }
    const holding = (test: (values: unknown[]) => boolean) =>
      new Set(
        [...collection.objects.values()]
          .filter((object) => {
            const value = object.properties[clause.property!];
            return value !== undefined && value !== null && test(asList(value));
          })
          .map((object) => object.docId),
      );
    const value = clause.value;
    switch (clause.operator) {
      case 'Equal':
        return holding((values) => values.includes(value));
      case 'NotEqual': {
        const equal = holding((values) => values.includes(value));
        return new Set(Array.from({ length: collection.nextDocId }, (_, id) => id).filter((id) => !equal.has(id)));
      }
      case 'GreaterThanEqual':
        return holding((values) => values.some((v) => (v as number) >= (value as number)));
      case 'LessThanEqual':
        return holding((values) => values.some((v) => (v as number) <= (value as number)));
      case 'ContainsAny':
        return holding((values) => (value as unknown[]).some((v) => values.includes(v)));
      case 'ContainsAll':
        return holding((values) => (value as unknown[]).every((v) => values.includes(v)));
      case 'Like':
        if (value !== '*') throw new Error('fake supports only Like "*"');
        return holding(() => true);
      default:
        throw new Error(`fake does not support ${clause.operator}`);
    }
  }

  /** The existing objects a clause allows (doc ids without an object are skipped, as searches and deletes do). */
  private existingMatches(name: string, clause: Clause): Array<[string, StoredObject]> {
    const allowed = this.allowList(name, clause);
    return [...this.stored(name).objects].filter(([, object]) => allowed.has(object.docId));
  }
}

/** The value field weaviate-client 3.x fills for a JavaScript value (serialize/index.js, FilterGuards), if any. */
function clientFieldOf(value: unknown): string | undefined {
  const every = (test: (v: unknown) => boolean) => Array.isArray(value) && value.every(test);
  const isInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v);
  const isFloat = (v: unknown) => typeof v === 'number' && !Number.isInteger(v);
  if (typeof value === 'string') return 'valueText';
  if (every((v) => typeof v === 'string')) return 'valueTextArray';
  if (isInt(value)) return 'valueInt';
  if (every(isInt)) return 'valueIntArray';
  if (typeof value === 'boolean') return 'valueBoolean';
  if (every((v) => typeof v === 'boolean')) return 'valueBooleanArray';
  if (isFloat(value)) return 'valueNumber';
  if (every(isFloat)) return 'valueNumberArray';
  return undefined;
}

function className(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}
