import type Joi from 'joi';
import { HttpError, type ValidationIssue } from './errors.js';

/** A request that failed its joi schema; rendered by the service's ErrorStyle. */
export class RequestValidationError extends HttpError {
  constructor(readonly issues: ValidationIssue[]) {
    super(400, issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.name = 'RequestValidationError';
  }
}

const EDGE_PREFS: Joi.ValidationOptions = { abortEarly: false, convert: true, errors: { wrap: { label: false } } };

/** Each schema with the edge preferences bound once: options passed to validate() are re-merged on every call. */
const prepared = new WeakMap<Joi.AnySchema<unknown>, Joi.AnySchema<unknown>>();

function withEdgePrefs<T>(schema: Joi.AnySchema<T>): Joi.AnySchema<T> {
  // A schema's entry is made from that very schema, so it has the schema's type.
  let bound = prepared.get(schema) as Joi.AnySchema<T> | undefined;
  if (!bound) {
    bound = schema.prefs(EDGE_PREFS);
    prepared.set(schema, bound);
  }
  return bound;
}

/** Validates one request part and returns the converted value (defaults applied), collecting every issue. */
export function validatePart<T>(part: 'path' | 'query' | 'body', schema: Joi.AnySchema<T>, value: unknown): T {
  const result = withEdgePrefs(schema).validate(value);
  if (!result.error) return result.value;
  throw new RequestValidationError(
    result.error.details.map((d) => ({ loc: [part, ...d.path.map(String)], msg: d.message, type: d.type })),
  );
}
