import {
  assertValidFilter,
  listFieldName,
  MATCHES_NOTHING,
  numericFieldName,
  scalarFieldName,
} from './metadata-fields.js';
import type { FilterScalar, VectorFilter } from './vector-store.js';

/** A SQL string literal: single quotes doubled, nothing else is special in DataFusion's standard literals. */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** A SQL numeric literal: JavaScript's text of a finite number (digits, point, exponent) is one DataFusion reads. */
export function sqlNumber(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError('a SQL number must be finite');
  return String(value);
}

/** The list column of a key: `tags` keeps its own column, every other list key has an `l_*` column. */
export function listColumn(key: string): string {
  return key === 'tags' ? 'tags' : listFieldName(key);
}

function jsonList(values: FilterScalar[]): string {
  return `[${values.map((value) => sqlString(JSON.stringify(value))).join(', ')}]`;
}

/**
 * Translates a VectorFilter into a LanceDB SQL predicate over the store's columns: scalar (in)equality and `IN` on the
 * JSON-encoded `m_*` columns, bounds on the Float64 `n_*` columns, `array_has_any` / `array_has_all` on the list
 * columns (`tags`, `l_*`, items JSON-encoded). Values only ever appear as escaped literals of JSON text or as numeric
 * literals; column names come from scalarFieldName & co., never from input. Returns undefined for "everything" and
 * MATCHES_NOTHING when a condition needs a column that does not exist yet (a `notEquals` field without a column
 * restricts nothing: no record holds it).
 */
export function lanceWhere(
  filter: VectorFilter | undefined,
  columns: ReadonlySet<string>,
): string | undefined | typeof MATCHES_NOTHING {
  assertValidFilter(filter);
  const clauses: string[] = [];
  for (const [key, value] of Object.entries(filter?.equals ?? {})) {
    const column = scalarFieldName(key);
    if (!columns.has(column)) return MATCHES_NOTHING;
    clauses.push(`${column} = ${sqlString(JSON.stringify(value))}`);
  }
  for (const [key, value] of Object.entries(filter?.notEquals ?? {})) {
    const column = scalarFieldName(key);
    // NULL <> x is NULL in SQL, so records without the field are asked for explicitly.
    if (columns.has(column)) clauses.push(`(${column} IS NULL OR ${column} <> ${sqlString(JSON.stringify(value))})`);
  }
  const tags = filter?.tagsAny ?? [];
  if (tags.length > 0) clauses.push(`array_has_any(tags, ${jsonList(tags)})`);
  for (const [key, { gte, lte }] of Object.entries(filter?.range ?? {})) {
    const column = numericFieldName(key);
    if (!columns.has(column)) return MATCHES_NOTHING;
    const bounds = [`${column} IS NOT NULL`];
    if (gte !== undefined) bounds.push(`${column} >= ${sqlNumber(gte)}`);
    if (lte !== undefined) bounds.push(`${column} <= ${sqlNumber(lte)}`);
    clauses.push(bounds.join(' AND '));
  }
  for (const [key, values] of Object.entries(filter?.in ?? {})) {
    if (values.length === 0) return MATCHES_NOTHING;
    const scalar = scalarFieldName(key);
    const list = listColumn(key);
    const either: string[] = [];
    if (columns.has(scalar))
      either.push(`${scalar} IN (${values.map((v) => sqlString(JSON.stringify(v))).join(', ')})`);
    if (columns.has(list)) either.push(`array_has_any(${list}, ${jsonList(values)})`);
    if (either.length === 0) return MATCHES_NOTHING;
    clauses.push(either.length === 1 ? either[0] : `(${either.join(' OR ')})`);
  }
  for (const [key, values] of Object.entries(filter?.containsAll ?? {})) {
    if (values.length === 0) continue;
    const list = listColumn(key);
    if (!columns.has(list)) return MATCHES_NOTHING;
    clauses.push(`array_has_all(${list}, ${jsonList(values)})`);
  }
  return clauses.length > 0 ? clauses.join(' AND ') : undefined;
}
