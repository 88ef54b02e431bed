import { HttpError } from '../lib/http/index.js';
import { InvalidKeyError, StorageUnavailableError } from '../lib/storage/index.js';
import { VectorStoreUnavailableError } from '../lib/vectors/vector-store.js';

/** Fixed body message of every unexpected failure (contract text, spelling included). */
export const INTERNAL_ERROR_MESSAGE = 'Some error ocurred at API server. Please try later!';

/** The one message of 502 answers: storage or vector database unreachable or failing. */
export const STORAGE_UNAVAILABLE_MESSAGE = 'Storage backend is unavailable. Please try again later.';

/** True for failures of the storage or vector backends (answered 502). */
export function isBackendFailure(error: unknown): boolean {
  return error instanceof StorageUnavailableError || error instanceof VectorStoreUnavailableError;
}

/** Maps backend failures to 502 and rejected keys to 400; anything else is returned unchanged (500 if unknown). */
export function toHttpError(error: unknown): unknown {
  if (error instanceof HttpError) return error;
  if (isBackendFailure(error)) return new HttpError(502, STORAGE_UNAVAILABLE_MESSAGE);
  if (error instanceof InvalidKeyError) return new HttpError(400, error.message);
  return error;
}
