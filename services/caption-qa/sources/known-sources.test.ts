import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MemorySharedState, type SharedState } from '../../lib/shared-state/index.js';
import { LocalObjectStore } from '../../lib/storage/index.js';
import { SourceRegistry } from './known-sources.js';

describe('SourceRegistry across replicas', () => {
  let dir: string;
  let store: LocalObjectStore;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'caption-qa-sources-'));
    store = new LocalObjectStore(dir);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('knows a name another replica learnt at once through the shared state, without a reload', async () => {
    const shared = new MemorySharedState();
    const a = new SourceRegistry(store, 'caption-qa', shared);
    const b = new SourceRegistry(store, 'caption-qa', shared);
    await a.note('gate', 'night-run');
    expect(await b.known()).toEqual({ cameras: ['gate'], runs: ['night-run'] });
  });

  it('learns other replicas only at a reload without shared state (the one-replica default)', async () => {
    const a = new SourceRegistry(store, 'caption-qa');
    const b = new SourceRegistry(store, 'caption-qa');
    await a.note('gate', undefined);
    expect((await b.known()).cameras).toEqual([]);
    await b.load();
    expect((await b.known()).cameras).toEqual(['gate']);
  });

  it('answers the names it knows itself while the shared state is unreachable (fail open)', async () => {
    const down: SharedState = Object.assign(new MemorySharedState(), {
      recent: () => Promise.reject(new Error('unreachable')),
      pushRecent: () => Promise.reject(new Error('unreachable')),
    });
    const a = new SourceRegistry(store, 'caption-qa', down);
    await a.note('dock', undefined);
    expect((await a.known()).cameras).toEqual(['dock']);
  });
});
