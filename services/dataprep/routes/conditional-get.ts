import fresh from 'fresh';
import type { MediaValidators } from '../media/media-validators.js';

/** The validator header fields of one answer, as sent. */
export interface ValidatorFields {
  etag: string;
  /** An HTTP-date. */
  lastModified: string;
  cacheControl: string;
  /** Whether Last-Modified may satisfy an If-Range (a strong validator, RFC 9110 §8.8.2.2). */
  strongDate: boolean;
}

/**
 * The fields for `validators` in an answer sent at `now`. A modification time in the future (a camera or host with a
 * wrong clock) is sent as `now` (RFC 9110 §8.8.2.1), and is then no strong validator: it changes with every answer.
 */
export function validatorFields(validators: MediaValidators, now: Date): ValidatorFields {
  const future = validators.lastModified.getTime() > now.getTime();
  return {
    etag: validators.etag,
    lastModified: (future ? now : validators.lastModified).toUTCString(),
    cacheControl: validators.cacheControl,
    strongDate: validators.strong && !future,
  };
}

/** The conditional request fields of a GET or HEAD (absent ones undefined). */
export interface ConditionalRequest {
  ifNoneMatch?: string;
  ifModifiedSince?: string;
}

/**
 * True when the client's copy is current, so the answer is 304 (RFC 9110 §13.1.2–§13.1.3, §13.2.2): If-None-Match
 * by weak comparison (`*` and lists included) and, only without it, If-Modified-Since (a malformed date ignored).
 * `fresh` 2 evaluates exactly that; it is given these two fields only, because its reload rule (a request with
 * Cache-Control: no-cache is never fresh) is for caches: an origin server must still evaluate the conditions.
 */
export function isNotModified(request: ConditionalRequest, fields: ValidatorFields): boolean {
  return fresh(
    { 'if-none-match': request.ifNoneMatch, 'if-modified-since': request.ifModifiedSince },
    { etag: fields.etag, 'last-modified': fields.lastModified },
  );
}

/**
 * Whether a Range may be served under `ifRange` (RFC 9110 §13.1.5): true without If-Range; an entity-tag holds by
 * strong comparison only (a weak tag never does); an HTTP-date only when it is exactly the Last-Modified sent and that
 * is a strong validator. Anything else, malformed values included, means the whole representation (200).
 */
export function ifRangeHolds(ifRange: string | undefined, fields: ValidatorFields): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return !fields.etag.startsWith('W/') && value === fields.etag;
  return fields.strongDate && value === fields.lastModified;
}
