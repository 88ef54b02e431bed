import type Joi from 'joi';
import { HttpError, type ValidationIssue } from './errors.js';

/** A request that failed its joi schema; rendered by the service's ErrorStyle. */
export class RequestValidationError extends HttpError {
  constructor(readonly issues: ValidationIssue[]) {
    super(400, issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.name = 'RequestValidationError';
  }
}

/** Validates one request part and returns the converted value (defaults applied), collecting every issue. */
export function validatePart(part: 'path' | 'query' | 'body', schema: Joi.Schema, value: unknown): any {
  const result = schema.validate(value, { abortEarly: false, convert: true, errors: { wrap: { label: false } } });
  if (!result.error) return result.value;
  throw new RequestValidationError(
    result.error.details.map((d) => ({ loc: [part, ...d.path.map(String)], msg: d.message, type: d.type })),
  );
}
