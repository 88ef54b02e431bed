import Joi from 'joi';
import type { ErrorStyle } from '../lib/http/index.js';

/** Error codes of the contract's `{detail: {error_code, message, invalid_frames}}` bodies, plus the service limits'. */
export type ErrorCode =
  | 'NO_FRAMES_PROVIDED'
  | 'INVALID_FRAMES'
  | 'INTERNAL_ERROR'
  | 'VALIDATION_ERROR'
  | 'UNKNOWN_PATTERN'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'TOO_MANY_FRAMES'
  | 'REQUEST_TOO_LARGE'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'BAD_REQUEST';

/** One rejected frame: its position among the submitted frames and why. */
export type InvalidFrame = [index: number, reason: string];

/** Prefix of every 500 message, as the contract asks ("analysis-failed prefix followed by a summary"). */
export const ANALYSIS_FAILED_PREFIX = 'Analysis failed: ';

/** A failure answered with the contract's error body. */
export class AnalysisError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly invalidFrames?: InvalidFrame[],
  ) {
    super(message);
    this.name = 'AnalysisError';
  }

  /** The response body. */
  body(): ErrorBody {
    return errorBody(this.code, this.message, this.invalidFrames);
  }
}

/** The contract's error body. */
export interface ErrorBody {
  detail: { error_code: ErrorCode; message: string; invalid_frames?: InvalidFrame[] };
}

/** Builds an error body; `invalid_frames` only when given. */
export function errorBody(code: ErrorCode, message: string, invalidFrames?: InvalidFrame[]): ErrorBody {
  return { detail: { error_code: code, message, ...(invalidFrames ? { invalid_frames: invalidFrames } : {}) } };
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'REQUEST_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'VALIDATION_ERROR',
  500: 'INTERNAL_ERROR',
};

/** Joi schema of the error body, for the OpenAPI document. */
export const errorBodySchema = Joi.object({
  detail: Joi.object({
    error_code: Joi.string().required(),
    message: Joi.string().required(),
    invalid_frames: Joi.array()
      .items(Joi.array().ordered(Joi.number().integer(), Joi.string()))
      .description('Only for frame validation failures: [frame index, reason] pairs'),
  }).required(),
}).label('AnalysisErrorBody');

/** The kit's error style for everything the route does not answer itself (unknown paths, validation, 500s). */
export function analysisErrorStyle(): ErrorStyle {
  return {
    render: (status, message, issues) =>
      errorBody(
        CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST'),
        issues?.length ? issues.map((issue) => issue.msg).join('; ') : message,
      ),
    body: errorBodySchema,
    validationStatus: 422,
    internalMessage: `${ANALYSIS_FAILED_PREFIX}unexpected internal error`,
  };
}
