import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { createObjectStore, LocalObjectStore, S3ObjectStore } from './index.js';

describe('createObjectStore', () => {
  it('builds the local adapter on the given root', async () => {
    const root = await mkdtemp(join(tmpdir(), 'create-store-'));
    const store = createObjectStore({ backend: 'local', root });
    expect(store).toBeInstanceOf(LocalObjectStore);
    expect(store.backend).toBe('local');
    await store.put('media', 'a.txt', Buffer.from('x'));
    expect(await store.bucketExists('media')).toBe(true);
    await rm(root, { recursive: true, force: true });
  });

  it('builds the s3 adapter without contacting the server', async () => {
    const store = createObjectStore({
      backend: 's3',
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      forcePathStyle: true,
      checksumWhenRequired: true,
    });
    expect(store).toBeInstanceOf(S3ObjectStore);
    expect(store.backend).toBe('s3');
    await store.close();
  });
});
