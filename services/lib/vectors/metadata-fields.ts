import type { MetadataValue, VectorFilter, VectorRecord } from './vector-store.js';

/** Value kinds of canonical metadata fields; both backends enforce them so records behave the same everywhere. */
export type CanonicalKind = 'string' | 'integer' | 'number' | 'string[]';

/**
 * Canonical embedding metadata written by dataprep, with fixed kinds (a typed property in Weaviate). Any other
 * top-level key is user metadata: stored as is and filterable by equality when it holds a scalar.
 */
export const CANONICAL_FIELDS: Readonly<Record<string, CanonicalKind>> = Object.freeze({
  video_id: 'string',
  bucket_name: 'string',
  video_name: 'string',
  source_path: 'string',
  frame_id: 'integer',
  timestamp: 'number',
  tags: 'string[]',
  label: 'string',
  kind: 'string',
});

/** Marker for a filter that no stored record can satisfy (a field never written), so no query is needed. */
export const MATCHES_NOTHING = Symbol('matches nothing');

const SIMPLE_KEY = /^[a-z][a-z0-9_]{0,62}$/;

/** Simple keys stay readable (`<prefix>_<key>`); anything else is hex-encoded so no key can inject or clash in case. */
function encodedName(prefix: 'm' | 'n' | 'l', key: string): string {
  return SIMPLE_KEY.test(key) ? `${prefix}_${key}` : `${prefix}x_${Buffer.from(key, 'utf8').toString('hex')}`;
}

/** Column (LanceDB) or property (Weaviate) holding the JSON encoding of a scalar key, for `equals` and `in`. */
export function scalarFieldName(key: string): string {
  return encodedName('m', key);
}

/** Column or property holding a key's value when it is a number, for `range`. */
export function numericFieldName(key: string): string {
  return encodedName('n', key);
}

/** Column or property holding a list key's items, each JSON-encoded, for `in` and `containsAll`. */
export function listFieldName(key: string): string {
  return encodedName('l', key);
}

/** True when `value` is a number a `range` filter can compare. */
export function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** True when `value` is a scalar that `equals` filters can compare. */
export function isScalar(value: unknown): value is string | number | boolean {
  return (
    typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))
  );
}

/** True when `value` has the type a canonical field of `kind` holds (filters use it to rule out impossible matches). */
export function matchesKind(value: MetadataValue, kind: CanonicalKind): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string[]':
      return Array.isArray(value) && value.every((item) => typeof item === 'string');
  }
}

/** Throws TypeError/RangeError for a record the store cannot hold faithfully. */
export function assertValidRecord(record: VectorRecord, dimension: number): void {
  if (typeof record?.id !== 'string' || record.id.length === 0)
    throw new TypeError('record id must be a non-empty string');
  assertValidVector(record.vector, dimension);
  if (record.metadata === null || typeof record.metadata !== 'object' || Array.isArray(record.metadata)) {
    throw new TypeError(`metadata of ${record.id} must be an object`);
  }
  for (const [key, value] of Object.entries(record.metadata)) {
    if (key.length === 0) throw new TypeError(`metadata of ${record.id} has an empty key`);
    const valid = value === null || isScalar(value) || (Array.isArray(value) && value.every((item) => isScalar(item)));
    if (!valid) throw new TypeError(`metadata ${key} of ${record.id} must be a scalar, null or a list of scalars`);
    const kind = CANONICAL_FIELDS[key];
    if (kind && value !== null && !matchesKind(value, kind)) {
      throw new TypeError(`metadata ${key} of ${record.id} must be ${kind}`);
    }
  }
}

/** Throws RangeError unless `vector` has `dimension` finite components. */
export function assertValidVector(vector: Float32Array | number[], dimension: number): void {
  if (!(vector instanceof Float32Array) && !Array.isArray(vector)) throw new TypeError('vector must be an array');
  if (vector.length !== dimension)
    throw new RangeError(`vector has ${vector.length} dimensions, expected ${dimension}`);
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i])) throw new RangeError('vector components must be finite numbers');
  }
}

/** Throws TypeError for filters that cannot be expressed (non-scalar values, `tags` under `equals`/`notEquals`, bad bounds). */
export function assertValidFilter(filter: VectorFilter | undefined): void {
  if (filter === undefined) return;
  if (filter === null || typeof filter !== 'object') throw new TypeError('filter must be an object');
  for (const [key, value] of [...entriesOf(filter.equals, 'equals'), ...entriesOf(filter.notEquals, 'notEquals')]) {
    if (key === 'tags') throw new TypeError('filter tags with tagsAny, in or containsAll, not equals');
    if (!isScalar(value)) throw new TypeError(`filter value for ${key} must be a string, number or boolean`);
  }
  if (filter.tagsAny !== undefined) {
    if (!Array.isArray(filter.tagsAny) || !filter.tagsAny.every((tag) => typeof tag === 'string')) {
      throw new TypeError('tagsAny must be a list of strings');
    }
  }
  for (const [key, bounds] of entriesOf(filter.range, 'range')) {
    if (bounds === null || typeof bounds !== 'object' || Array.isArray(bounds)) {
      throw new TypeError(`range for ${key} must be an object with gte and/or lte`);
    }
    for (const [bound, value] of Object.entries(bounds)) {
      if (bound !== 'gte' && bound !== 'lte') throw new TypeError(`range for ${key} takes gte and lte only`);
      if (value !== undefined && !isNumber(value))
        throw new TypeError(`range ${bound} for ${key} must be a finite number`);
    }
  }
  for (const [key, values] of [...entriesOf(filter.in, 'in'), ...entriesOf(filter.containsAll, 'containsAll')]) {
    if (!Array.isArray(values) || !values.every((value) => isScalar(value))) {
      throw new TypeError(`filter values for ${key} must be a list of strings, numbers or booleans`);
    }
  }
}

function entriesOf(part: unknown, name: string): Array<[string, unknown]> {
  if (part === undefined) return [];
  if (part === null || typeof part !== 'object' || Array.isArray(part))
    throw new TypeError(`${name} must be an object`);
  return Object.entries(part);
}

/** Throws RangeError unless `k` is a positive integer. */
export function assertValidK(k: number): void {
  if (!Number.isSafeInteger(k) || k < 1) throw new RangeError('k must be a positive integer');
}
