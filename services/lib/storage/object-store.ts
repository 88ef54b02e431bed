import type { Readable } from 'node:stream';

/** Metadata of one stored object. */
export interface ObjectInfo {
  key: string;
  size: number;
  lastModified: Date;
  contentType?: string;
}

/** Result of a streaming put: the SHA-256 is computed while the bytes flow to storage. */
export interface PutResult {
  key: string;
  size: number;
  sha256: string;
}

/** Options of a streaming put. `maxBytes` aborts the put (and removes the partial object) past that size. */
export interface PutOptions {
  contentType?: string;
  maxBytes?: number;
}

/** A page of a listing: at most `limit` objects whose keys sort after `startAfter`. */
export interface ListOptions {
  limit?: number;
  startAfter?: string;
}

/** An inclusive byte range, as HTTP Range gives it. */
export interface ByteRange {
  start: number;
  end: number;
}

/** Raised when a put exceeds `maxBytes`; the partial object has been removed. */
export class ObjectTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`object exceeds ${limit} bytes`);
    this.name = 'ObjectTooLargeError';
  }
}

/** Raised for keys or bucket names that are not allowed (traversal, bad characters). */
export class InvalidKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidKeyError';
  }
}

/** Raised by `get` when the object (or its bucket) does not exist. */
export class ObjectNotFoundError extends Error {
  constructor(
    readonly bucket: string,
    readonly key: string,
  ) {
    super(`object not found: ${bucket}/${key}`);
    this.name = 'ObjectNotFoundError';
  }
}

/** Raised when the storage backend itself fails (network, permissions, server errors). */
export class StorageUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailableError';
  }
}

/** Port for media storage: buckets of keys ("<video_id>/<file>"), streamed in and out. */
export interface ObjectStore {
  /** Backend name reported by health: `local` or `s3`. */
  readonly backend: string;
  /** Streams `body` into `bucket/key`, hashing on the way. Creates the bucket when needed. */
  put(bucket: string, key: string, body: Readable | Buffer, options?: PutOptions): Promise<PutResult>;
  /**
   * Creates `bucket/key` with `body` only when no object has that key, atomically: of several racing calls for one
   * key exactly one resolves true, the others false, and readers never see a partial object. The building block of
   * claims (the duplicate policy's content markers). Creates the bucket when needed.
   */
  putIfAbsent(bucket: string, key: string, body: Buffer, options?: Pick<PutOptions, 'contentType'>): Promise<boolean>;
  /**
   * Streams the object, or the inclusive `range` of it, without buffering it whole. An `end` past the object's last
   * byte is clamped; throws ObjectNotFoundError when missing and RangeError when `start` is not inside the object.
   */
  get(bucket: string, key: string, range?: ByteRange): Promise<Readable>;
  /** Metadata, or undefined when the object does not exist. */
  stat(bucket: string, key: string): Promise<ObjectInfo | undefined>;
  /**
   * Objects whose key starts with `prefix`, sorted by key; with `options`, only the first `limit` of those whose key
   * sorts after `startAfter` (a page: the next one starts after the last key returned). A missing bucket lists nothing.
   */
  list(bucket: string, prefix?: string, options?: ListOptions): Promise<ObjectInfo[]>;
  /** Removes every object whose key starts with `prefix` (all of the bucket for ''); returns the count. */
  deletePrefix(bucket: string, prefix: string): Promise<number>;
  /** True when the bucket exists. */
  bucketExists(bucket: string): Promise<boolean>;
  /** Health probe; throws StorageUnavailableError when the backend cannot be reached. */
  ping(): Promise<void>;
  /** True when objects are files on this machine, so `localPath` hands them out instead of a copy being needed. */
  readonly hasLocalFiles: boolean;
  /**
   * The object's own file on this machine, for read-only use (never write or remove it), or undefined when the store
   * keeps objects elsewhere (then read it with `get`). Where it has files, a missing object throws ObjectNotFoundError.
   */
  localPath(bucket: string, key: string): Promise<string | undefined>;
  /**
   * A URL that reads the object over HTTP(S) (Range honoured) for `expiresInSeconds`, for a program that seeks in it
   * (ffmpeg), or undefined where the store has local files (use `localPath`). It carries a signature: never log it.
   */
  signedGetUrl(bucket: string, key: string, expiresInSeconds: number): Promise<string | undefined>;
  /** Releases connections and sockets; the store is not used afterwards. */
  close(): Promise<void>;
}
