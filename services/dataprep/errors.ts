import { HttpError, InvalidHttpUrlError, statusMessageStyle, type ErrorMapping } from '../lib/http/index.js';
import { ImageTooLargeError } from '../lib/media/index.js';
import { InvalidKeyError, StorageUnavailableError } from '../lib/storage/index.js';
import { VectorStoreUnavailableError } from '../lib/vectors/index.js';

/** Fixed body message of every unexpected failure (contract text, spelling included). */
export const INTERNAL_ERROR_MESSAGE = 'Some error ocurred at API server. Please try later!';

/** The one message of 502 answers: storage or vector database unreachable or failing. */
export const STORAGE_UNAVAILABLE_MESSAGE = 'Storage backend is unavailable. Please try again later.';

/** The contract's error body, `{status: 'error', message}`; its `body` schema documents every error answer. */
export const DATAPREP_ERROR_STYLE = statusMessageStyle(INTERNAL_ERROR_MESSAGE);

/** True for failures of the storage or vector backends (answered 502). */
export function isBackendFailure(error: unknown): boolean {
  return error instanceof StorageUnavailableError || error instanceof VectorStoreUnavailableError;
}

/** Message of the 413 answer for an image whose header states more pixels than MM_DATAPREP_IMAGE_MAX_PIXELS. */
export function imageTooLargeMessage(error: ImageTooLargeError): string {
  return `Image too large: ${error.width}×${error.height} pixels, the limit is ${error.maxPixels} pixels`;
}

/**
 * The dataprep error mapping: backend failures 502, rejected keys and URLs 400, pixel bombs 413. Routes whose contract answers backend
 * failures with 502 carry it (`mapError`); processing applies it to every failure it reports.
 */
export const mapDataprepError: ErrorMapping = (error) => {
  if (isBackendFailure(error)) return new HttpError(502, STORAGE_UNAVAILABLE_MESSAGE);
  if (error instanceof InvalidKeyError || error instanceof InvalidHttpUrlError)
    return new HttpError(400, error.message);
  if (error instanceof ImageTooLargeError) return new HttpError(413, imageTooLargeMessage(error));
  return undefined;
};
