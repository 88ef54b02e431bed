import type { FilterValue } from 'weaviate-client';
import { VectorStoreUnavailableError } from './vector-store.js';

type ScalarValueField = 'valueText' | 'valueInt' | 'valueNumber' | 'valueBoolean' | 'valueDate';

/** The field a Weaviate `where` carries its value in; a list of values goes in the `…Array` variant. */
export type WeaviateValueField = ScalarValueField | `${ScalarValueField}Array`;

/** A value a filter compares with: a scalar or a list of them. */
export type WhereValue = string | number | boolean | Array<string | number | boolean>;

/** A GraphQL `where` filter as weaviate-client's GraphQL builders take it (`withWhere`). */
export type GraphQLWhere =
  | { operator: 'And' | 'Or'; operands: GraphQLWhere[] }
  | ({ operator: FilterValue['operator']; path: [string] } & { [field in WeaviateValueField]?: WhereValue });

/** Weaviate's primitive data types and the field each one's filter values travel in (base type of an array type). */
const FIELD_OF_TYPE: Readonly<Record<string, ScalarValueField>> = {
  text: 'valueText',
  int: 'valueInt',
  number: 'valueNumber',
  boolean: 'valueBoolean',
  date: 'valueDate',
};

/**
 * The one place that maps a filter value to Weaviate's value type: the field of the property's declared data type
 * (the base type of an array type), never one guessed from the JavaScript value — the server refuses any other field
 * (entities/filters/filters_validator.go: `data type filter cannot use "valueInt" on type "number", use "valueNumber"
 * instead`, and a `3` looks like an int to JavaScript) — with the `Array` variant for a list of values.
 */
export function valueFieldFor(dataType: string, value: WhereValue): WeaviateValueField {
  const field = FIELD_OF_TYPE[dataType.replace(/\[\]$/, '')];
  if (!field) throw new VectorStoreUnavailableError(`cannot filter on a Weaviate property of type ${dataType}`);
  return Array.isArray(value) ? `${field}Array` : field;
}

/**
 * The GraphQL `where` for a filter built for weaviate-client's gRPC calls, each value in the field `valueFieldFor`
 * chooses from `dataTypeOf(property)`, the property's data type in the collection schema. (Over gRPC the client names
 * the field from the JavaScript value and the server converts it to the declared type, adapters/handlers/grpc/v1/
 * filters.go; GraphQL converts nothing, so `where` is typed here.)
 */
export function graphQLWhere(filter: FilterValue, dataTypeOf: (property: string) => string): GraphQLWhere {
  if (filter.operator === 'And' || filter.operator === 'Or') {
    return {
      operator: filter.operator,
      operands: (filter.filters ?? []).map((operand) => graphQLWhere(operand, dataTypeOf)),
    };
  }
  const property = filter.target?.property;
  if (!property) throw new TypeError(`a ${filter.operator} filter without a property cannot be sent over GraphQL`);
  const value = filter.value as WhereValue;
  return { operator: filter.operator, path: [property], [valueFieldFor(dataTypeOf(property), value)]: value };
}
