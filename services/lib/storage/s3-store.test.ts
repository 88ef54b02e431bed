import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { describeObjectStoreContract } from './object-store.contract.js';
import { StorageUnavailableError } from './object-store.js';
import { S3ObjectStore } from './s3-store.js';
import { startS3rver, type S3rverHandle } from './testing/s3rver-server.js';

describeObjectStoreContract('s3 (s3rver)', async () => {
  const server = await startS3rver();
  const store = new S3ObjectStore(server.storeConfig);
  return { store, close: () => server.stop() };
});

describe('S3ObjectStore specifics', () => {
  let server: S3rverHandle;
  beforeAll(async () => {
    server = await startS3rver();
  });
  afterAll(() => server.stop());

  it('prefixes physical bucket names and keeps the content type', async () => {
    const store = new S3ObjectStore({ ...server.storeConfig, bucketPrefix: 'tenant-a-' });
    const plain = new S3ObjectStore(server.storeConfig);
    await store.put('media', 'v/x.jpg', Buffer.from('jpeg'), { contentType: 'image/jpeg' });
    expect(await plain.bucketExists('tenant-a-media')).toBe(true);
    expect(await plain.bucketExists('media')).toBe(false);
    expect(await store.stat('media', 'v/x.jpg')).toMatchObject({ size: 4, contentType: 'image/jpeg' });
    await store.close();
    await plain.close();
  });

  it('test server: lists started multipart uploads and aborts them', async () => {
    const { endpoint, region, accessKeyId, secretAccessKey } = server.storeConfig;
    const client = new S3Client({
      endpoint,
      region,
      forcePathStyle: true,
      credentials: { accessKeyId: accessKeyId!, secretAccessKey: secretAccessKey! },
    });
    await client.send(new CreateBucketCommand({ Bucket: 'pending' }));
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: 'pending', Key: 'v/a.bin' }));
    expect(await server.pendingUploads('pending')).toEqual(['v/a.bin']);
    await client.send(new AbortMultipartUploadCommand({ Bucket: 'pending', Key: 'v/a.bin', UploadId }));
    expect(await server.pendingUploads('pending')).toEqual([]);
    client.destroy();
  });

  it('aborts its multipart upload when the body fails after parts were sent', async () => {
    const store = new S3ObjectStore({ ...server.storeConfig, partSize: 5 * 1024 * 1024 });
    const failure = new Error('client went away');
    let sent = 0;
    const body = new Readable({
      read() {
        // Two parts' worth and then some: at least one UploadPart has happened before the body fails.
        if (sent < 11 * 1024 * 1024) {
          sent += 1024 * 1024;
          this.push(Buffer.alloc(1024 * 1024, 3));
        } else this.destroy(failure);
      },
    });
    await expect(store.put('aborts', 'v/big.bin', body)).rejects.toBe(failure);
    expect(await server.pendingUploads('aborts')).toEqual([]);
    expect(await store.stat('aborts', 'v/big.bin')).toBeUndefined();
    await store.close();
  });

  it('maps an unreachable endpoint to StorageUnavailableError', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const config = { ...server.storeConfig, endpoint: `http://127.0.0.1:${closedPort}` };
    const client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      maxAttempts: 1,
    });
    const store = new S3ObjectStore(config, client);
    await expect(store.ping()).rejects.toThrow(StorageUnavailableError);
    await expect(store.stat('media', 'a')).rejects.toThrow(StorageUnavailableError);
    await expect(store.put('media', 'a', Buffer.from('x'))).rejects.toThrow(StorageUnavailableError);
    await store.close();
  });
});
