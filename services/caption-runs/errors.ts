import Joi from 'joi';
import type { ErrorStyle } from '../lib/http/index.js';

/** The detail of an unknown run (the original's FastAPI answer). */
export const RUN_NOT_FOUND = 'Run not found';
/** The detail of an unexpected failure: the cause is logged with the request id, never sent. */
export const INTERNAL_ERROR = 'Internal server error';

const issueSchema = Joi.object({
  loc: Joi.array().items(Joi.string()).description('Where: body, query or path, then the field'),
  msg: Joi.string(),
  type: Joi.string(),
}).label('ValidationIssue');

/**
 * The error body, as FastAPI (the original service) answers: `{detail: {message}}` for every error, and for invalid
 * requests (422) `{detail: [{loc, msg, type}]}` with one entry per invalid field.
 */
export const errorBodySchema = Joi.object({
  detail: Joi.alternatives()
    .try(Joi.object({ message: Joi.string().required() }).label('ErrorDetail'), Joi.array().items(issueSchema))
    .required(),
}).label('CaptionRunsError');

/** The service's error style: 422 with every invalid field, `{detail: {message}}` otherwise. */
export function captionRunsErrorStyle(): ErrorStyle {
  return {
    render: (_status, message, issues) => ({
      detail: issues?.length ? issues.map(({ loc, msg, type }) => ({ loc, msg, type })) : { message },
    }),
    body: errorBodySchema,
    validationStatus: 422,
    internalMessage: INTERNAL_ERROR,
  };
}

/** Test and sweep helper: true when `body` has the service's error shape. */
export function isCaptionRunsErrorBody(body: unknown): boolean {
  return errorBodySchema.validate(body).error === undefined && Object.keys(body as object).length === 1;
}
