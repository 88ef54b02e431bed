import Joi from 'joi';
import { HttpError, type ErrorMapping, type ErrorStyle } from '../lib/http/index.js';
import { RecorderUnavailableError } from './recorder/recorder.js';
import { RuleExistsError, RuleNotFoundError, RuleStoreUnavailableError } from './rules/rule-book.js';
import { WatcherStoreUnavailableError } from './watchers/watcher-book.js';

/** Fixed detail of unexpected failures: the cause is logged with the request id, never sent. */
export const INTERNAL_ERROR = 'Internal server error';

/** One failed rule of a request, as FastAPI reports it. */
const validationIssue = Joi.object({
  loc: Joi.array().items(Joi.alternatives(Joi.string(), Joi.number())).required(),
  msg: Joi.string().required(),
  type: Joi.string().required(),
}).label('ValidationError');

/** The contract's HTTPValidationError (422) or FastAPI's `{detail: <string>}` for every other error. */
export const errorBodySchema = Joi.object({
  detail: Joi.alternatives(Joi.string(), Joi.array().items(validationIssue)).required(),
}).label('HTTPValidationError');

/**
 * FastAPI's error bodies, as the contract's service B answers: validation failures 422 with
 * `{detail: [{loc, msg, type}]}` (every failed field, `loc` starting with `body`, `query` or `path`), every other
 * error `{detail: <message>}`.
 */
export function cameraRulesErrorStyle(): ErrorStyle {
  return {
    render: (_status, message, issues) => ({ detail: issues ?? message }),
    body: errorBodySchema,
    validationStatus: 422,
    internalMessage: INTERNAL_ERROR,
  };
}

/**
 * Domain errors every route answers with their own status: a recorder that does not answer is a bad gateway, a rule
 * id taken 400 (the contract's), an unknown rule 404, a rule store that does not answer 503.
 */
export const mapCameraRulesError: ErrorMapping = (error) => {
  if (error instanceof RecorderUnavailableError) return new HttpError(502, error.message);
  if (error instanceof RuleExistsError) return new HttpError(400, error.message);
  if (error instanceof RuleNotFoundError) return new HttpError(404, error.message);
  if (error instanceof RuleStoreUnavailableError) return new HttpError(503, error.message);
  if (error instanceof WatcherStoreUnavailableError) return new HttpError(503, error.message);
  return undefined;
};
