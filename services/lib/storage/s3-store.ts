import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  assertValidBucketName,
  assertValidKey,
  assertValidPrefix,
  checkedListOptions,
  isValidBucketName,
} from './keys.js';
import { assertValidRange, checkedLimit } from './measuring-stream.js';
import {
  InvalidKeyError,
  ObjectNotFoundError,
  ObjectTooLargeError,
  StorageUnavailableError,
  type ByteRange,
  type ListOptions,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type PutResult,
} from './object-store.js';
import { processUserAgent } from '../user-agent/index.js';

const MIB = 1024 * 1024;
/** S3 refuses multipart parts under 5 MiB (except the last). */
const MIN_PART_SIZE = 5 * MIB;
const DEFAULT_PART_SIZE = 8 * MIB;
/** DeleteObjects takes at most this many keys per request. */
const DELETE_BATCH = 1000;
/** ListObjectsV2 answers at most this many keys per request. */
const LIST_PAGE = 1000;
/** Tries of a conditional put that S3 answers 409 ConditionalRequestConflict (a racing conditional write). */
const CONDITIONAL_PUT_ATTEMPTS = 5;

/** Settings of the S3 adapter; the checksum and path-style switches exist for S3-compatible servers. */
export interface S3ObjectStoreConfig {
  /** Custom endpoint (MinIO, Ceph, a test server); AWS when omitted. */
  endpoint?: string;
  region: string;
  /** Static credentials; the SDK's default provider chain is used when omitted. */
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** Path-style URLs (`endpoint/bucket/key`), needed by most S3-compatible servers. */
  forcePathStyle: boolean;
  /**
   * Send and check checksums only where the API requires them. Needed by servers that do not understand aws-chunked
   * uploads (they would store the framing); leave false on AWS to keep the SDK's integrity defaults.
   */
  checksumWhenRequired: boolean;
  /** Prepended to every bucket name, so several installations can share one account. */
  bucketPrefix?: string;
  /** Size of multipart parts (and of the largest single PUT); at least 5 MiB. Default 8 MiB. */
  partSize?: number;
}

/** ObjectStore on S3 or an S3-compatible server. Unknown-length bodies go up as multipart uploads, hashed on the way. */
export class S3ObjectStore implements ObjectStore {
  readonly backend = 's3';
  readonly hasLocalFiles = false;
  private readonly client: S3Client;
  private readonly bucketPrefix: string;
  private readonly partSize: number;
  private readonly knownBuckets = new Set<string>();

  constructor(config: S3ObjectStoreConfig, client?: S3Client) {
    this.bucketPrefix = config.bucketPrefix ?? '';
    this.partSize = Math.max(config.partSize ?? DEFAULT_PART_SIZE, MIN_PART_SIZE);
    this.client = client ?? new S3Client(clientConfig(config));
  }

  async put(bucket: string, key: string, body: Readable | Buffer, options: PutOptions = {}): Promise<PutResult> {
    const Bucket = this.physicalBucket(bucket);
    assertValidKey(key);
    const limit = checkedLimit(options.maxBytes);
    if (Buffer.isBuffer(body) && body.length > limit) throw new ObjectTooLargeError(limit);
    await this.ensureBucket(Bucket);

    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    const hash = createHash('sha256');
    const pending: Buffer[] = [];
    let pendingBytes = 0;
    let size = 0;
    let uploadId: string | undefined;
    const parts: CompletedPart[] = [];
    const ContentType = options.contentType;

    const uploadPart = async (data: Buffer): Promise<void> => {
      uploadId ??= (
        await this.call('start multipart upload', () =>
          this.client.send(new CreateMultipartUploadCommand({ Bucket, Key: key, ContentType })),
        )
      ).UploadId;
      const PartNumber = parts.length + 1;
      const { ETag } = await this.call('upload part', () =>
        this.client.send(
          new UploadPartCommand({
            Bucket,
            Key: key,
            UploadId: uploadId,
            PartNumber,
            Body: data,
            ContentLength: data.length,
          }),
        ),
      );
      parts.push({ ETag, PartNumber });
    };

    try {
      // Iterating (rather than piping) keeps at most one part in memory and applies back-pressure to the source;
      // leaving the loop early destroys the source, which is what stops an oversized upload.
      for await (const chunk of source) {
        const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        size += data.length;
        if (size > limit) throw new ObjectTooLargeError(limit);
        hash.update(data);
        pending.push(data);
        pendingBytes += data.length;
        while (pendingBytes >= this.partSize) {
          const joined = Buffer.concat(pending);
          pending.length = 0;
          pending.push(joined.subarray(this.partSize));
          pendingBytes = joined.length - this.partSize;
          await uploadPart(joined.subarray(0, this.partSize));
        }
      }
      const rest = Buffer.concat(pending);
      if (uploadId === undefined) {
        await this.call(`put ${bucket}/${key}`, () =>
          this.client.send(
            new PutObjectCommand({ Bucket, Key: key, Body: rest, ContentLength: rest.length, ContentType }),
          ),
        );
      } else {
        if (rest.length > 0) await uploadPart(rest);
        await this.call('complete multipart upload', () =>
          this.client.send(
            new CompleteMultipartUploadCommand({
              Bucket,
              Key: key,
              UploadId: uploadId,
              MultipartUpload: { Parts: parts },
            }),
          ),
        );
      }
    } catch (err) {
      if (uploadId !== undefined) {
        // Best effort: a failed abort leaves parts that a bucket lifecycle rule cleans up; the original error matters.
        await this.client
          .send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId: uploadId }))
          .catch(() => undefined);
      }
      throw err;
    }
    return { key, size, sha256: hash.digest('hex') };
  }

  /**
   * PutObject with `If-None-Match: *`: S3 answers 412 PreconditionFailed when the key exists, and 409
   * ConditionalRequestConflict while a racing conditional write is in flight, which it asks clients to retry.
   */
  async putIfAbsent(
    bucket: string,
    key: string,
    body: Buffer,
    options: Pick<PutOptions, 'contentType'> = {},
  ): Promise<boolean> {
    const Bucket = this.physicalBucket(bucket);
    assertValidKey(key);
    await this.ensureBucket(Bucket);
    const put = new PutObjectCommand({
      Bucket,
      Key: key,
      Body: body,
      ContentLength: body.length,
      ContentType: options.contentType,
      IfNoneMatch: '*',
    });
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.send(put);
        return true;
      } catch (err) {
        const status = httpStatus(err);
        if (status === 412 || (err as Error)?.name === 'PreconditionFailed') return false;
        if (status === 409 && attempt < CONDITIONAL_PUT_ATTEMPTS) continue;
        throw toStorageError(err, `put ${bucket}/${key} if absent`);
      }
    }
  }

  async get(bucket: string, key: string, range?: ByteRange): Promise<Readable> {
    const Bucket = this.physicalBucket(bucket);
    assertValidKey(key);
    if (range) assertValidRange(range);
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket, Key: key, Range: range && `bytes=${range.start}-${range.end}` }),
      );
      return out.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) throw new ObjectNotFoundError(bucket, key);
      throw toStorageError(err, `get ${bucket}/${key}`);
    }
  }

  async stat(bucket: string, key: string): Promise<ObjectInfo | undefined> {
    const Bucket = this.physicalBucket(bucket);
    assertValidKey(key);
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket, Key: key }));
      return {
        key,
        size: out.ContentLength ?? 0,
        lastModified: out.LastModified ?? new Date(0),
        ...(out.ContentType ? { contentType: out.ContentType } : {}),
      };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw toStorageError(err, `stat ${bucket}/${key}`);
    }
  }

  async list(bucket: string, prefix = '', options?: ListOptions): Promise<ObjectInfo[]> {
    const Bucket = this.physicalBucket(bucket);
    assertValidPrefix(prefix);
    const { limit, startAfter } = checkedListOptions(options);
    const found: ObjectInfo[] = [];
    let ContinuationToken: string | undefined;
    try {
      do {
        const page = await this.client.send(
          new ListObjectsV2Command({
            Bucket,
            Prefix: prefix || undefined,
            ContinuationToken,
            // S3 ignores StartAfter once a continuation token is given; both are sent as the API allows.
            StartAfter: startAfter || undefined,
            MaxKeys: Math.min(LIST_PAGE, limit - found.length),
          }),
        );
        for (const item of page.Contents ?? []) {
          if (item.Key === undefined) continue;
          found.push({ key: item.Key, size: item.Size ?? 0, lastModified: item.LastModified ?? new Date(0) });
        }
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken && found.length < limit);
    } catch (err) {
      if (isNotFound(err)) return [];
      throw toStorageError(err, `list ${bucket}`);
    }
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).slice(0, limit);
  }

  async deletePrefix(bucket: string, prefix: string): Promise<number> {
    const Bucket = this.physicalBucket(bucket);
    const keys = (await this.list(bucket, prefix)).map((o) => o.key);
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const out = await this.call(`delete from ${bucket}`, () =>
        this.client.send(
          new DeleteObjectsCommand({ Bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
        ),
      );
      const failed = out.Errors ?? [];
      if (failed.length > 0) {
        throw new StorageUnavailableError(
          `could not delete ${failed.length} object(s) from ${bucket}: ${failed[0].Code ?? 'error'}`,
        );
      }
    }
    return keys.length;
  }

  async bucketExists(bucket: string): Promise<boolean> {
    const Bucket = this.physicalBucket(bucket);
    try {
      await this.client.send(new HeadBucketCommand({ Bucket }));
      this.knownBuckets.add(Bucket);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw toStorageError(err, `check bucket ${bucket}`);
    }
  }

  /** Lists buckets: proves the endpoint answers and the credentials are accepted. */
  async ping(): Promise<void> {
    await this.call('ping', () => this.client.send(new ListBucketsCommand({})));
  }

  /** Objects live on the server (callers stream them with `get`); only the names are checked, without a request. */
  async localPath(bucket: string, key: string): Promise<undefined> {
    this.physicalBucket(bucket);
    assertValidKey(key);
    return undefined;
  }

  /** A presigned GET of the object (query-string SigV4, computed locally without a request). */
  async signedGetUrl(bucket: string, key: string, expiresInSeconds: number): Promise<string> {
    const Bucket = this.physicalBucket(bucket);
    assertValidKey(key);
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket, Key: key }), { expiresIn: expiresInSeconds });
  }

  /** Releases the client's sockets. */
  async close(): Promise<void> {
    this.client.destroy();
  }

  private physicalBucket(bucket: string): string {
    assertValidBucketName(bucket);
    const name = this.bucketPrefix + bucket;
    if (!isValidBucketName(name)) throw new InvalidKeyError(`bucket name too long with prefix: ${name}`);
    return name;
  }

  private async ensureBucket(Bucket: string): Promise<void> {
    if (this.knownBuckets.has(Bucket)) return;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket }));
    } catch (err) {
      if (!isNotFound(err)) throw toStorageError(err, `check bucket ${Bucket}`);
      try {
        await this.client.send(new CreateBucketCommand({ Bucket }));
      } catch (createErr) {
        // Someone else (another replica) created it between our two calls: that is what we wanted.
        const name = (createErr as Error)?.name;
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') {
          throw toStorageError(createErr, `create bucket ${Bucket}`);
        }
      }
    }
    this.knownBuckets.add(Bucket);
  }

  private async call<T>(what: string, action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (err) {
      throw toStorageError(err, what);
    }
  }
}

function clientConfig(config: S3ObjectStoreConfig): S3ClientConfig {
  return {
    // Appended to the SDK's own User-Agent: the storage's access log names the component.
    customUserAgent: processUserAgent(),
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    ...(config.accessKeyId && config.secretAccessKey
      ? {
          credentials: {
            accessKeyId: config.accessKeyId,
            secretAccessKey: config.secretAccessKey,
            ...(config.sessionToken ? { sessionToken: config.sessionToken } : {}),
          },
        }
      : {}),
    ...(config.checksumWhenRequired
      ? { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' }
      : {}),
  };
}

function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function isNotFound(err: unknown): boolean {
  const name = (err as Error)?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchBucket' || httpStatus(err) === 404;
}

/** Unsatisfiable ranges are the caller's mistake; everything else the SDK throws means the backend failed us. */
function toStorageError(err: unknown, what: string): Error {
  if (err instanceof StorageUnavailableError || err instanceof ObjectTooLargeError) return err;
  const status = httpStatus(err);
  const name = (err as Error)?.name ?? 'Error';
  if (name === 'InvalidRange' || status === 416) return new RangeError(`${what}: range not satisfiable`);
  return new StorageUnavailableError(`${what} failed: ${name}${status ? ` (HTTP ${status})` : ''}`, { cause: err });
}
