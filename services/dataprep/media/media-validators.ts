import type { BigIntStats } from 'node:fs';

/** The HTTP validators of one media item (RFC 9110 §8.8) and how long a client may reuse it (RFC 9111 §5.2). */
export interface MediaValidators {
  /** The ETag field value, quoted; `W/`-prefixed when weak. */
  etag: string;
  lastModified: Date;
  /** True when both validators change whenever the bytes do: only then may If-Range resume from them. */
  strong: boolean;
  /** The Cache-Control field value. */
  cacheControl: string;
}

/**
 * Stored bytes named by their SHA-256 do not change under a video_id in normal operation, so a client may reuse them
 * for an hour without asking; the hour bounds how long a deleted video can still play from a browser's cache.
 * `private`: media may be camera footage, and who may see it is the deployment's call, so no shared cache keeps it.
 */
export const CONTENT_HASHED_CACHE_CONTROL = 'private, max-age=3600';

/** Media whose bytes may change without notice: kept by the client, but revalidated (a cheap 304) on every use. */
export const REVALIDATE_CACHE_CONTROL = 'private, no-cache';

/** Stored media whose SHA-256 (computed at upload or ingest) is known to describe the stored object. */
export function contentHashValidators(sha256: string, lastModified: Date): MediaValidators {
  return { etag: `"${sha256}"`, lastModified, strong: true, cacheControl: CONTENT_HASHED_CACHE_CONTROL };
}

/** Stored media without a trusted hash: its size and write time (a rewrite in the same clock tick may keep both). */
export function storedObjectValidators(size: number, lastModified: Date): MediaValidators {
  return {
    etag: `W/"${size.toString(16)}-${lastModified.getTime().toString(16)}"`,
    lastModified,
    strong: false,
    cacheControl: REVALIDATE_CACHE_CONTROL,
  };
}

/**
 * A file referenced in place, by its identity: size, inode, mtime and ctime (nanoseconds). A rename over it, a
 * rewrite, even one that sets the mtime back, changes it; two rewrites within one timestamp tick need not, so weak.
 */
export function referencedFileValidators(stats: BigIntStats): MediaValidators {
  const identity = [stats.size, stats.ino, stats.mtimeNs, stats.ctimeNs].map((n) => n.toString(16)).join('-');
  return { etag: `W/"${identity}"`, lastModified: stats.mtime, strong: false, cacheControl: REVALIDATE_CACHE_CONTROL };
}
