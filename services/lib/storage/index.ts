import { LocalObjectStore } from './local-store.js';
import type { ObjectStore } from './object-store.js';
import { S3ObjectStore, type S3ObjectStoreConfig } from './s3-store.js';

export {
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
export {
  assertValidBucketName,
  assertValidKey,
  assertValidPrefix,
  BUCKET_NAME_PATTERN,
  BUCKET_NAME_RULE,
  isValidBucketName,
} from './keys.js';
export { LocalObjectStore } from './local-store.js';
export { S3ObjectStore, type S3ObjectStoreConfig } from './s3-store.js';

/** Which object store to build: the local filesystem (embedded) or S3 (cluster). */
export type ObjectStoreConfig = { backend: 'local'; root: string } | ({ backend: 's3' } & S3ObjectStoreConfig);

/** Builds the configured ObjectStore adapter. */
export function createObjectStore(config: ObjectStoreConfig): ObjectStore {
  switch (config.backend) {
    case 'local':
      return new LocalObjectStore(config.root);
    case 's3': {
      const { backend: _backend, ...s3 } = config;
      return new S3ObjectStore(s3);
    }
  }
}
