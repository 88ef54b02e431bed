import {
  FormatRegistry,
  Type,
  type TLiteral,
  type TObject,
  type TProperties,
  type TSchema,
  type TUnion,
} from '@sinclair/typebox';

// TypeBox refuses a format nobody registered: without this every timestamp fails validation. metav1.Time is RFC 3339,
// fractional seconds optional.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (value) => RFC3339.test(value) && !Number.isNaN(Date.parse(value)));
}

/** A string enum: TypeBox checks it; the CRD generator writes it as `type: string` + `enum`. */
export function stringEnum<const V extends readonly string[]>(
  values: V,
  description: string,
): TUnion<TLiteral<V[number]>[]> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  ) as never;
}

/** An object that refuses unknown fields (the CRD prunes them; the embedded store refuses them like strict apply). */
export function strictObject<P extends TProperties>(properties: P, description: string): TObject<P> {
  return Type.Object(properties, { description, additionalProperties: false });
}

/** A free-form object kept as written (`x-kubernetes-preserve-unknown-fields`): user metadata only. */
export function freeFormObject(description: string): TSchema & { static: Record<string, unknown> } {
  return Type.Object(
    {},
    { description, additionalProperties: true, 'x-kubernetes-preserve-unknown-fields': true },
  ) as never;
}

/** An RFC 3339 timestamp (metav1.Time). */
export function timestamp(description: string) {
  return Type.String({ format: 'date-time', description });
}
