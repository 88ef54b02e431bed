import { createRequire } from 'node:module';
import type * as Arrow from 'apache-arrow';
import { listColumn } from './lancedb-filter.js';
import { isNumber, isScalar, numericFieldName, scalarFieldName } from './metadata-fields.js';
import type { VectorRecord } from './vector-store.js';

/**
 * apache-arrow as lancedb sees it: lancedb (CommonJS) recognises an Arrow table by class, against its own CommonJS
 * copy of the package; a table built with the ESM copy is rebuilt column by column on the way in, which loses
 * nullability and fails on fixed-size lists. Building with the same copy hands the buffers over as they are.
 */
const arrow = createRequire(import.meta.url)('apache-arrow') as typeof Arrow;

/** The columns every table has besides the filter columns. */
export const BASE_COLUMNS: readonly string[] = ['id', 'vector', 'tags', 'metadata'];

/** A list of JSON-encoded items, the type of `tags` and of every `l_*` column. */
export function jsonListType(): Arrow.List {
  return new arrow.List(new arrow.Field('item', new arrow.Utf8(), true));
}

/** The Arrow type of a column, known from its name (see metadata-fields.ts for the prefixes). */
export function columnType(name: string, dimension: number): Arrow.DataType {
  if (name === 'vector') return new arrow.FixedSizeList(dimension, new arrow.Field('item', new arrow.Float32(), true));
  if (name === 'tags' || name.startsWith('l_') || name.startsWith('lx_')) return jsonListType();
  if (name.startsWith('n_') || name.startsWith('nx_')) return new arrow.Float64();
  return new arrow.Utf8();
}

/** The Arrow field of a column: id, vector and metadata are always present, filter columns may be null. */
export function columnField(name: string, dimension: number): Arrow.Field {
  return new arrow.Field(name, columnType(name, dimension), !['id', 'vector', 'metadata'].includes(name));
}

/** The filter columns' values of one record: `m_*` JSON text, `n_*` numbers, lists as JSON-encoded items. */
export function filterValues(record: VectorRecord): Map<string, unknown> {
  const values = new Map<string, unknown>();
  for (const [key, value] of Object.entries(record.metadata)) {
    if (isScalar(value)) values.set(scalarFieldName(key), JSON.stringify(value));
    if (isNumber(value)) values.set(numericFieldName(key), value);
    if (Array.isArray(value) && key !== 'tags')
      values.set(
        listColumn(key),
        value.map((item) => JSON.stringify(item)),
      );
  }
  return values;
}

/**
 * The records as one Arrow table over `columns` (the table's columns, in any order), `filters[i]` being
 * `filterValues(records[i])` (the caller has them already, to add missing columns). Built column by column, the
 * vectors copied once into one Float32Array: converting row objects element by element costs seconds per thousand
 * 1792-d vectors, this costs milliseconds.
 */
export function recordsToArrow(
  records: VectorRecord[],
  filters: ReadonlyArray<Map<string, unknown>>,
  columns: readonly string[],
  dimension: number,
): Arrow.Table {
  const vectors = new Float32Array(records.length * dimension);
  records.forEach((record, i) => vectors.set(record.vector, i * dimension));
  const fields = columns.map((name) => columnField(name, dimension));
  const data = fields.map(({ name, type }) => {
    switch (name) {
      case 'id':
        return arrow.vectorFromArray(
          records.map((r) => r.id),
          type,
        ).data[0];
      case 'metadata':
        return arrow.vectorFromArray(
          records.map((r) => JSON.stringify(r.metadata)),
          type,
        ).data[0];
      case 'tags':
        return arrow.vectorFromArray(
          records.map((r) => (Array.isArray(r.metadata.tags) ? r.metadata.tags.map((tag) => JSON.stringify(tag)) : [])),
          type,
        ).data[0];
      case 'vector': {
        const child = arrow.makeData({ type: new arrow.Float32(), length: vectors.length, data: vectors });
        return arrow.makeData({ type: type as Arrow.FixedSizeList, length: records.length, nullCount: 0, child });
      }
      default:
        return arrow.vectorFromArray(
          filters.map((values) => values.get(name) ?? null),
          type,
        ).data[0];
    }
  });
  const schema = new arrow.Schema(fields);
  const struct = arrow.makeData({
    type: new arrow.Struct(fields),
    length: records.length,
    nullCount: 0,
    children: data,
  });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, struct)]);
}
