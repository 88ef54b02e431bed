import weaviate, { Filters, type FilterValue } from 'weaviate-client';
import {
  assertValidFilter,
  CANONICAL_FIELDS,
  isScalar,
  MATCHES_NOTHING,
  matchesKind,
  scalarFieldName,
  type CanonicalKind,
} from './metadata-fields.js';
import type { MetadataValue, VectorFilter, VectorRecord } from './vector-store.js';

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
 * Object properties for a record: canonical values in their typed properties, other scalars JSON-encoded in `m_*`
 * text properties (for equality filters), and in `extra` everything a typed property cannot give back exactly
 * (user keys, nulls, empty lists).
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

/** Names of the `m_*` properties a record needs beyond the fixed ones. */
export function dynamicPropertyNames(record: VectorRecord): string[] {
  return Object.entries(record.metadata)
    .filter(([key, value]) => !CANONICAL_FIELDS[key] && isScalar(value))
    .map(([key]) => scalarFieldName(key));
}

/**
 * Translates a VectorFilter into a weaviate-client filter: Equal (NotEqual) on canonical typed properties or on the
 * JSON text of `m_*` properties, ContainsAny on tags, joined with And. Weaviate's NotEqual is the complement of Equal
 * over the whole shard, so objects without the property match it, as the port requires. Undefined means "everything"; MATCHES_NOTHING is
 * returned when no record can match (a value of the wrong type for a canonical field, a never-written key).
 */
export function weaviateFilter(
  filter: VectorFilter | undefined,
  knownProperties: ReadonlySet<string>,
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
  if (parts.length === 0) return undefined;
  return parts.length === 1 ? parts[0] : Filters.and(...parts);
}

/** A filter every object of the collection satisfies (deleteMany insists on one). */
export function everyObject(): FilterValue {
  return weaviate.filter.byProperty(RECORD_ID).like('*');
}
