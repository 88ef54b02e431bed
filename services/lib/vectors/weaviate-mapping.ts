import weaviate, { Filters, type FilterValue } from 'weaviate-client';
import {
  assertValidFilter,
  CANONICAL_FIELDS,
  isNumber,
  isScalar,
  listFieldName,
  MATCHES_NOTHING,
  matchesKind,
  numericFieldName,
  scalarFieldName,
  type CanonicalKind,
} from './metadata-fields.js';
import type { FilterScalar, MetadataValue, VectorFilter, VectorRecord } from './vector-store.js';

/** Property holding the caller's record id (Weaviate object ids must be UUIDs, so ours is derived from it). */
export const RECORD_ID = 'record_id';
/** Property holding, as JSON, every metadata value that has no faithful typed property of its own. */
export const EXTRA = 'extra';

/** A property definition as `collections.create` / `config.addProperty` take it. */
export interface WeaviatePropertyDefinition {
  name: string;
  dataType: 'text' | 'text[]' | 'int' | 'number';
  tokenization?: 'field';
  indexFilterable?: boolean;
  indexSearchable?: boolean;
  indexRangeFilters?: boolean;
}

const DATA_TYPES: Record<CanonicalKind, WeaviatePropertyDefinition['dataType']> = {
  string: 'text',
  integer: 'int',
  number: 'number',
  'string[]': 'text[]',
};

/** Text that is only ever compared whole: `field` tokenization makes Equal exact (case and punctuation kept). */
export function filterableText(name: string): WeaviatePropertyDefinition {
  return { name, dataType: 'text', tokenization: 'field', indexFilterable: true, indexSearchable: false };
}

/** The property a user key's values need, known from its name's prefix (see metadata-fields.ts). */
export function dynamicProperty(name: string): WeaviatePropertyDefinition {
  if (name.startsWith('n_') || name.startsWith('nx_')) {
    return { name, dataType: 'number', indexFilterable: true, indexRangeFilters: true };
  }
  if (name.startsWith('l_') || name.startsWith('lx_')) return { ...filterableText(name), dataType: 'text[]' };
  return filterableText(name);
}

/** The properties a new collection is created with: record id, canonical metadata (typed), and `extra`. */
export function collectionProperties(): WeaviatePropertyDefinition[] {
  const canonical = Object.entries(CANONICAL_FIELDS).map(([name, kind]): WeaviatePropertyDefinition => {
    const dataType = DATA_TYPES[kind];
    if (dataType === 'text' || dataType === 'text[]') {
      return { name, dataType, tokenization: 'field', indexFilterable: true, indexSearchable: false };
    }
    return { name, dataType, indexFilterable: true, indexRangeFilters: true };
  });
  return [
    filterableText(RECORD_ID),
    ...canonical,
    { name: EXTRA, dataType: 'text', indexFilterable: false, indexSearchable: false },
  ];
}

/**
 * Object properties for a record: canonical values in their typed properties; for a user key, a scalar JSON-encoded
 * in its `m_*` text property (equality), a number also in its `n_*` number property (ranges), a non-empty list as
 * JSON-encoded items in its `l_*` text[] property (`in`, `containsAll`); and in `extra` everything a typed property
 * cannot give back exactly (user keys, nulls, empty lists).
 */
export function toProperties(record: VectorRecord): Record<string, unknown> {
  const properties: Record<string, unknown> = { [RECORD_ID]: record.id };
  const extra: Record<string, MetadataValue> = {};
  for (const [key, value] of Object.entries(record.metadata)) {
    if (CANONICAL_FIELDS[key]) {
      if (value === null || (Array.isArray(value) && value.length === 0)) extra[key] = value;
      else properties[key] = value;
    } else {
      extra[key] = value;
      if (isScalar(value)) properties[scalarFieldName(key)] = JSON.stringify(value);
      if (isNumber(value)) properties[numericFieldName(key)] = value;
      if (Array.isArray(value) && value.length > 0)
        properties[listFieldName(key)] = value.map((v) => JSON.stringify(v));
    }
  }
  properties[EXTRA] = JSON.stringify(extra);
  return properties;
}

/** Rebuilds a record's metadata from the properties Weaviate returns. */
export function fromProperties(properties: Record<string, unknown>): Record<string, MetadataValue> {
  const metadata: Record<string, MetadataValue> = {};
  for (const key of Object.keys(CANONICAL_FIELDS)) {
    const value = properties[key];
    if (value !== undefined && value !== null) metadata[key] = value as MetadataValue;
  }
  const extra = typeof properties[EXTRA] === 'string' ? (JSON.parse(properties[EXTRA] as string) as object) : {};
  return Object.assign(metadata, extra);
}

/** Names of the `m_*`, `n_*` and `l_*` properties a record needs beyond the fixed ones. */
export function dynamicPropertyNames(record: VectorRecord): string[] {
  return Object.keys(toProperties(record)).filter((name) => /^[mnl]x?_/.test(name));
}

/** Integer bounds for an `int` property: fractional bounds rounded inwards, kept within the safe integers. */
function integerBound(value: number, direction: 'gte' | 'lte'): number {
  const rounded = direction === 'gte' ? Math.ceil(value) : Math.floor(value);
  return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, rounded));
}

/**
 * A number bound as weaviate-client sends it over gRPC: integral values travel as int64 (the server converts them for
 * `number` properties), so bounds beyond ±2^53 are clamped there (no timestamp or frame number comes near).
 */
function numberBound(value: number): number {
  return Number.isInteger(value) ? Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, value)) : value;
}

function orOf(parts: FilterValue[]): FilterValue {
  return parts.length === 1 ? parts[0] : Filters.or(...parts);
}

/** The `range` condition on one key, or MATCHES_NOTHING when no record can hold a number there. */
function rangeCondition(
  key: string,
  { gte, lte }: { gte?: number; lte?: number },
  known: ReadonlyMap<string, string>,
): FilterValue | typeof MATCHES_NOTHING {
  const kind = CANONICAL_FIELDS[key];
  if (kind === 'string' || kind === 'string[]') return MATCHES_NOTHING;
  const name = kind ? key : numericFieldName(key);
  if (!kind && !known.has(name)) return MATCHES_NOTHING;
  const property = weaviate.filter.byProperty(name);
  const bound = (value: number, direction: 'gte' | 'lte') =>
    kind === 'integer' ? integerBound(value, direction) : numberBound(value);
  const parts: FilterValue[] = [];
  if (gte !== undefined) parts.push(property.greaterOrEqual(bound(gte, 'gte')));
  if (lte !== undefined) parts.push(property.lessOrEqual(bound(lte, 'lte')));
  // No bound: the property only has to hold a number, which is >= 0 or <= 0 (null-state indexes are off).
  if (parts.length === 0) return Filters.or(property.greaterOrEqual(0), property.lessOrEqual(0));
  return parts.length === 1 ? parts[0] : Filters.and(...parts);
}

/** The `in` condition on one key, or MATCHES_NOTHING when no record can hold one of the values. */
function inCondition(
  key: string,
  values: FilterScalar[],
  known: ReadonlyMap<string, string>,
): FilterValue | typeof MATCHES_NOTHING {
  const kind = CANONICAL_FIELDS[key];
  const where = weaviate.filter;
  if (kind) {
    const itemKind = kind === 'string[]' ? 'string' : kind;
    const usable = values.filter((value) => matchesKind(value, itemKind));
    if (usable.length === 0) return MATCHES_NOTHING;
    // weaviate-client sends a mixed list of integral and fractional numbers as neither int[] nor number[], so a
    // `number` property is asked value by value (each one widened by the server as for equals).
    if (kind === 'number') return orOf(usable.map((value) => where.byProperty(key).equal(value as number)));
    if (kind === 'integer') return where.byProperty(key).containsAny(usable as number[]);
    return where.byProperty(key).containsAny(usable as string[]);
  }
  const encoded = values.map((value) => JSON.stringify(value));
  const parts = [scalarFieldName(key), listFieldName(key)]
    .filter((name) => known.has(name))
    .map((name) => where.byProperty(name).containsAny(encoded));
  return parts.length === 0 ? MATCHES_NOTHING : orOf(parts);
}

/** The `containsAll` condition on one key, or MATCHES_NOTHING when no list there can hold every value. */
function containsAllCondition(
  key: string,
  values: FilterScalar[],
  known: ReadonlyMap<string, string>,
): FilterValue | typeof MATCHES_NOTHING {
  const kind = CANONICAL_FIELDS[key];
  if (kind) {
    if (kind !== 'string[]' || !values.every((value) => typeof value === 'string')) return MATCHES_NOTHING;
    return weaviate.filter.byProperty(key).containsAll(values as string[]);
  }
  const name = listFieldName(key);
  if (!known.has(name)) return MATCHES_NOTHING;
  return weaviate.filter.byProperty(name).containsAll(values.map((value) => JSON.stringify(value)));
}

/**
 * True when the filter names a user key whose properties are not all known here: another replica may have added
 * them, so a "nothing can match" answer is worth one more look at the collection's config.
 */
export function namesUnknownUserKeys(filter: VectorFilter | undefined, known: ReadonlyMap<string, string>): boolean {
  const keys = [
    ...Object.keys(filter?.equals ?? {}),
    ...Object.keys(filter?.range ?? {}),
    ...Object.keys(filter?.in ?? {}),
    ...Object.keys(filter?.containsAll ?? {}),
  ].filter((key) => !CANONICAL_FIELDS[key]);
  return keys.some((key) =>
    [scalarFieldName(key), numericFieldName(key), listFieldName(key)].some((n) => !known.has(n)),
  );
}

/**
 * Translates a VectorFilter into a weaviate-client filter: Equal (NotEqual) on canonical typed properties or on the
 * JSON text of `m_*` properties, ContainsAny on tags, GreaterThanEqual / LessThanEqual on canonical numbers or `n_*`
 * properties (`range`), ContainsAny on `m_*` and `l_*` (`in`), ContainsAll on `tags` or `l_*` (`containsAll`), joined
 * with And. `knownProperties` are the collection's properties. Undefined means "everything"; MATCHES_NOTHING is
 * returned when no record can match (a value of the wrong type for a canonical field, a never-written key).
 *
 * Weaviate's NotEqual is the complement of Equal over every doc id the shard has handed out
 * (adapters/repos/db/inverted/row_reader_roaring_set.go, roaringset.BitmapFactory): objects without the property
 * match it, as the port requires, but so do the doc ids of deleted and re-written objects, and an Aggregate count is
 * the size of that allow list. Every other condition holds only live doc ids, so And with one counts each object
 * once; a filter of NotEquals alone is anchored on `everyObject()`.
 */
export function weaviateFilter(
  filter: VectorFilter | undefined,
  knownProperties: ReadonlyMap<string, string>,
): FilterValue | undefined | typeof MATCHES_NOTHING {
  assertValidFilter(filter);
  const where = weaviate.filter;
  const parts: FilterValue[] = [];
  for (const [key, value] of Object.entries(filter?.equals ?? {})) {
    const kind = CANONICAL_FIELDS[key];
    if (kind) {
      // Values are scalars (assertValidFilter), so a list-typed field never matches.
      if (!matchesKind(value, kind)) return MATCHES_NOTHING;
      parts.push(where.byProperty(key).equal(value));
    } else {
      const name = scalarFieldName(key);
      if (!knownProperties.has(name)) return MATCHES_NOTHING;
      parts.push(where.byProperty(name).equal(JSON.stringify(value)));
    }
  }
  for (const [key, value] of Object.entries(filter?.notEquals ?? {})) {
    // A value no record can hold, or a property never written, differs from every record: no restriction.
    const kind = CANONICAL_FIELDS[key];
    if (kind) {
      if (matchesKind(value, kind)) parts.push(where.byProperty(key).notEqual(value));
    } else {
      const name = scalarFieldName(key);
      if (knownProperties.has(name)) parts.push(where.byProperty(name).notEqual(JSON.stringify(value)));
    }
  }
  const tags = filter?.tagsAny ?? [];
  if (tags.length > 0) parts.push(where.byProperty('tags').containsAny(tags));
  const conditions = [
    ...Object.entries(filter?.range ?? {}).map(([key, bounds]) => rangeCondition(key, bounds, knownProperties)),
    ...Object.entries(filter?.in ?? {}).map(([key, values]) =>
      values.length === 0 ? MATCHES_NOTHING : inCondition(key, values, knownProperties),
    ),
    ...Object.entries(filter?.containsAll ?? {})
      .filter(([, values]) => values.length > 0)
      .map(([key, values]) => containsAllCondition(key, values, knownProperties)),
  ];
  for (const condition of conditions) {
    if (condition === MATCHES_NOTHING) return MATCHES_NOTHING;
    parts.push(condition);
  }
  if (parts.length === 0) return undefined;
  if (parts.every((part) => part.operator === 'NotEqual')) parts.unshift(everyObject());
  return parts.length === 1 ? parts[0] : Filters.and(...parts);
}

/** A filter every object of the collection satisfies (deleteMany insists on one). */
export function everyObject(): FilterValue {
  return weaviate.filter.byProperty(RECORD_ID).like('*');
}
