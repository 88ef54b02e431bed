import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LocalObjectStore } from './local-store.js';
import { describeObjectStoreContract } from './object-store.contract.js';
import { InvalidKeyError, StorageUnavailableError } from './object-store.js';

describeObjectStoreContract('local filesystem', async () => {
  const root = await mkdtemp(join(tmpdir(), 'local-store-contract-'));
  return { store: new LocalObjectStore(join(root, 'data')), close: () => rm(root, { recursive: true, force: true }) };
});

describe('LocalObjectStore on disk', () => {
  let base: string;
  let root: string;
  let outside: string;
  let store: LocalObjectStore;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'local-store-'));
    root = join(base, 'root');
    outside = join(base, 'outside');
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, 'secret.txt'), 'do not serve');
    store = new LocalObjectStore(root);
    await store.put('media', 'vid/keep.txt', Buffer.from('inside'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('lays buckets out as directories and leaves no temp files behind', async () => {
    expect(await readdir(join(root, 'media', 'vid'))).toEqual(['keep.txt']);
    expect(await readdir(join(root, 'media', '.argus-tmp'))).toEqual([]);
    await expect(store.put('media', '.argus-tmp/x', Buffer.from('x'))).rejects.toThrow(InvalidKeyError);
  });

  it('refuses to read or write through a symlinked directory that leaves the root', async () => {
    await symlink(outside, join(root, 'media', 'link'));
    await expect(store.get('media', 'link/secret.txt')).rejects.toThrow(InvalidKeyError);
    await expect(store.stat('media', 'link/secret.txt')).rejects.toThrow(InvalidKeyError);
    await expect(store.put('media', 'link/planted.txt', Buffer.from('x'))).rejects.toThrow(InvalidKeyError);
    await expect(store.put('media', 'link/new/planted.txt', Buffer.from('x'))).rejects.toThrow(InvalidKeyError);
    expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
    // Listing does not follow links either.
    expect((await store.list('media')).map((o) => o.key)).toEqual(['vid/keep.txt']);
  });

  it('refuses a symlinked file and a symlinked bucket that point outside', async () => {
    await symlink(join(outside, 'secret.txt'), join(root, 'media', 'vid', 'secret.txt'));
    await expect(store.get('media', 'vid/secret.txt')).rejects.toThrow(InvalidKeyError);
    await symlink(outside, join(root, 'evil-bucket'));
    await expect(store.get('evil-bucket', 'secret.txt')).rejects.toThrow(InvalidKeyError);
    await expect(store.list('evil-bucket')).rejects.toThrow(InvalidKeyError);
    await expect(store.put('evil-bucket', 'x.txt', Buffer.from('x'))).rejects.toThrow(InvalidKeyError);
  });

  it('reports a key that clashes with a directory as an invalid key', async () => {
    await expect(store.put('media', 'vid', Buffer.from('x'))).rejects.toThrow(InvalidKeyError);
  });

  it('reports an unusable root as StorageUnavailableError', async () => {
    const file = join(base, 'not-a-dir');
    await writeFile(file, 'x');
    const broken = new LocalObjectStore(join(file, 'root'));
    await expect(broken.ping()).rejects.toThrow(StorageUnavailableError);
    await expect(broken.put('media', 'a.txt', Buffer.from('x'))).rejects.toThrow(StorageUnavailableError);
  });
});
