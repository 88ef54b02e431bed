import { assertValidFilter, MATCHES_NOTHING, scalarFieldName } from './metadata-fields.js';
import type { VectorFilter } from './vector-store.js';

/** A SQL string literal: single quotes doubled, nothing else is special in DataFusion's standard literals. */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * Translates a VectorFilter into a LanceDB SQL predicate over the store's columns: scalar (in)equality on the
 * JSON-encoded `m_*` columns, `array_has_any` on the tags list. Values only ever appear as escaped literals of JSON
 * text. Returns undefined for "everything" and MATCHES_NOTHING when an `equals` field has no column yet (a
 * `notEquals` field without a column restricts nothing: no record holds it).
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
  if (tags.length > 0)
    clauses.push(`array_has_any(tags, [${tags.map((tag) => sqlString(JSON.stringify(tag))).join(', ')}])`);
  return clauses.length > 0 ? clauses.join(' AND ') : undefined;
}
