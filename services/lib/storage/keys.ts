import { InvalidKeyError, type ListOptions } from './object-store.js';

/**
 * S3's bucket naming rules as one regular expression (ECMAScript, so a JSON Schema `pattern` too): 3–63 characters of
 * lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit, no `..`, `.-` or `-.`,
 * and not shaped like an IPv4 address.
 */
export const BUCKET_NAME_PATTERN = /^(?!\d+\.\d+\.\d+\.\d+$)(?!.*(?:\.\.|\.-|-\.))[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** BUCKET_NAME_PATTERN in words, for error messages and documents. */
export const BUCKET_NAME_RULE =
  '3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit, ' +
  'without two dots or a dot beside a hyphen, and not an IP address (S3 bucket naming rules)';
const MAX_KEY_BYTES = 1024;

// C0 controls, DEL and C1 controls: never meaningful in a media key, and dangerous in logs and paths.
function hasControlChars(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/** True when `name` follows the S3 bucket naming rules (3–63 chars, lowercase alnum, dots, hyphens). */
export function isValidBucketName(name: string): boolean {
  return typeof name === 'string' && BUCKET_NAME_PATTERN.test(name);
}

/** Throws InvalidKeyError unless `name` is a valid bucket name. */
export function assertValidBucketName(name: string): void {
  if (!isValidBucketName(name)) throw new InvalidKeyError(`invalid bucket name: ${JSON.stringify(String(name))}`);
}

/**
 * Throws InvalidKeyError unless `key` is a relative object key: no leading `/`, no backslash, no control characters,
 * no empty, `.` or `..` segments, at most 1024 UTF-8 bytes. The same rules hold on every backend so that a key that
 * works on S3 also works on the filesystem.
 */
export function assertValidKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidKeyError('object key must be a non-empty string');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw new InvalidKeyError('object key exceeds 1024 bytes');
  if (hasControlChars(key)) throw new InvalidKeyError('object key contains control characters');
  if (key.includes('\\')) throw new InvalidKeyError('object key contains a backslash');
  if (key.startsWith('/')) throw new InvalidKeyError('object key must be relative');
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw new InvalidKeyError(`object key has an empty, "." or ".." segment: ${JSON.stringify(key)}`);
    }
  }
}

/**
 * Throws InvalidKeyError unless `prefix` is usable as a listing prefix: '' or a key-shaped string that may end with
 * `/` (a "directory" prefix).
 */
export function assertValidPrefix(prefix: string): void {
  if (typeof prefix !== 'string') throw new InvalidKeyError('prefix must be a string');
  if (prefix === '') return;
  assertValidKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}

/**
 * The page a listing asks for, checked: `limit` a positive integer (Infinity when absent), `startAfter` a string
 * without control characters of at most 1024 UTF-8 bytes ('' when absent, which every key sorts after).
 */
export function checkedListOptions(options: ListOptions = {}): { limit: number; startAfter: string } {
  const { limit = Number.POSITIVE_INFINITY, startAfter = '' } = options;
  if (limit !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(limit) || limit < 1)) {
    throw new RangeError('limit must be a positive integer');
  }
  if (typeof startAfter !== 'string' || Buffer.byteLength(startAfter, 'utf8') > MAX_KEY_BYTES) {
    throw new InvalidKeyError('startAfter must be a string of at most 1024 bytes');
  }
  if (hasControlChars(startAfter)) throw new InvalidKeyError('startAfter contains control characters');
  return { limit, startAfter };
}
