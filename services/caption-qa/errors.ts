import Joi from 'joi';
import type { ErrorStyle } from '../lib/http/index.js';

/** The contract's detail for a chat request without a question. */
export const INPUT_REQUIRED = 'Input question is required and cannot be empty';
/** The contract's detail for an embedding request without image data. */
export const IMAGE_DATA_REQUIRED = 'Input image data is required and cannot be empty';
/** The contract's detail for an unexpected embedding failure (the cause is logged with the request id, never sent). */
export const EMBEDDING_FAILED = 'Embedding processing failed';

/** Text that goes into prompts, logs and answers: no C0 control characters but tab, line feed and carriage return. */
// eslint-disable-next-line no-control-regex
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/;

/** Status of every request the contract calls invalid (missing, empty or mistyped fields), as FastAPI answers them. */
export const VALIDATION_STATUS = 422;

/** Joi schema of the contract's error body, for the OpenAPI document. */
export const errorBodySchema = Joi.object({ detail: Joi.string().required() }).label('CaptionQaError');

/**
 * `{detail: <string>}` for every error the kit answers: validation failures carry the message of their first failed
 * rule (the route schemas phrase them as the contract does), anything unexpected the embedding-failed detail.
 */
export function captionQaErrorStyle(): ErrorStyle {
  return {
    render: (_status, message, issues) => ({
      detail: issues?.length ? [...new Set(issues.map((issue) => issue.msg))].join('; ') : message,
    }),
    body: errorBodySchema,
    validationStatus: VALIDATION_STATUS,
    internalMessage: EMBEDDING_FAILED,
  };
}
