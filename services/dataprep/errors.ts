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

/**
 * A failure of one request or job item whose message is meant for the client (and for the item's result). The domain
 * throws these; only mapDataprepError knows which HTTP status each kind is answered with.
 */
export abstract class DataprepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The input is wrong: a bad source, an undecodable or unsupported file, a path outside the ingest root (400). */
export class InvalidInputError extends DataprepError {}

/** What the input names does not exist (or no longer): a video, a file below the ingest root (404). */
export class NotFoundError extends DataprepError {}

/** The content is already ingested as another video while duplicates are disallowed (409). */
export class DuplicateContentError extends DataprepError {
  constructor(
    readonly ownerBucket: string,
    readonly ownerVideoId: string,
  ) {
    super(duplicateMessage(ownerBucket, ownerVideoId));
  }
}

/** The input exceeds a size bound: bytes of an image or download, pixels stated in an image header (413). */
export class TooLargeError extends DataprepError {}

/** Message of a duplicate: names the video that already holds the content. */
export function duplicateMessage(bucket: string, videoId: string): string {
  return `Identical content already exists as video_id ${videoId} in bucket ${bucket}`;
}

/** True for failures of the storage or vector backends (answered 502). */
export function isBackendFailure(error: unknown): boolean {
  return error instanceof StorageUnavailableError || error instanceof VectorStoreUnavailableError;
}

/** Message of the 413 answer for an image whose header states more pixels than MM_DATAPREP_IMAGE_MAX_PIXELS. */
export function imageTooLargeMessage(error: ImageTooLargeError): string {
  return `Image too large: ${error.width}×${error.height} pixels, the limit is ${error.maxPixels} pixels`;
}

/** The HTTP status of each kind of domain error. */
const DOMAIN_STATUS: ReadonlyArray<[abstract new (...args: never[]) => DataprepError, number]> = [
  [InvalidInputError, 400],
  [NotFoundError, 404],
  [DuplicateContentError, 409],
  [TooLargeError, 413],
];

/** Domain errors as the HTTP answers of every route (the app's mapping). */
export const mapDomainError: ErrorMapping = (error) => {
  if (!(error instanceof DataprepError)) return undefined;
  const status = DOMAIN_STATUS.find(([kind]) => error instanceof kind)?.[1] ?? 400;
  return new HttpError(status, error.message);
};

/**
 * The dataprep error mapping: domain errors by kind, backend failures 502, rejected keys and URLs 400, pixel bombs
 * 413. Routes whose contract answers backend failures with 502 carry it (`mapError`); the others map domain errors
 * only (mapDomainError), so a storage failure there is a plain 500.
 */
export const mapDataprepError: ErrorMapping = (error) => {
  const domain = mapDomainError(error);
  if (domain) return domain;
  if (isBackendFailure(error)) return new HttpError(502, STORAGE_UNAVAILABLE_MESSAGE);
  if (error instanceof InvalidKeyError || error instanceof InvalidHttpUrlError)
    return new HttpError(400, error.message);
  if (error instanceof ImageTooLargeError) return new HttpError(413, imageTooLargeMessage(error));
  return undefined;
};
