import Joi from 'joi';

/** An error that maps to an HTTP status and a client-safe message; anything else becomes a 500. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** One failed validation rule, located in the request (`query.frame_interval`, `body.tags.0`, …). */
export interface ValidationIssue {
  loc: string[];
  msg: string;
  type: string;
}

/**
 * How a service answers a domain error it knows (a backend failure, a rejected key): the HttpError to render, or
 * undefined for errors the mapping does not know (they stay as they are: unexpected ones become 500s).
 */
export type ErrorMapping = (error: unknown) => HttpError | undefined;

/** How a service renders its error bodies: each contract names its own shape. */
export interface ErrorStyle {
  /** Body for an error with a client-safe message (issues only for validation failures). */
  render(status: number, message: string, issues?: ValidationIssue[]): unknown;
  /** Schema of what `render` produces: the documented body of every error answer. */
  body: Joi.ObjectSchema;
  /** Status used for request validation failures (400 or 422). */
  validationStatus: number;
  /** Fixed message of unexpected (500) failures: never the error's own text. */
  internalMessage: string;
}

/** `{status: 'error', message}` — the media preparation contract. */
export function statusMessageStyle(internalMessage: string): ErrorStyle {
  return {
    render: (_status, message) => ({ status: 'error', message }),
    body: Joi.object({ status: Joi.string().valid('error').required(), message: Joi.string().required() }),
    validationStatus: 400,
    internalMessage,
  };
}

/** `{detail: message}`, plus `errors` listing each failed field for validation failures. */
export function detailStyle(internalMessage = 'Internal server error'): ErrorStyle {
  return {
    render: (_status, message, issues) => (issues ? { detail: message, errors: issues } : { detail: message }),
    body: Joi.object({
      detail: Joi.string().required(),
      errors: Joi.array()
        .items(Joi.object({ loc: Joi.array().items(Joi.string()), msg: Joi.string(), type: Joi.string() }))
        .description('Only for validation failures: one entry per invalid field'),
    }),
    validationStatus: 422,
    internalMessage,
  };
}
