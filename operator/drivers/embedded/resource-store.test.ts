import { afterEach, describe, expect, it } from '@jest/globals';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeResourceStoreContract, newIngestJob } from '../../ports/resource-store.contract.js';
import type { NewResource } from '../../ports/index.js';
import { EmbeddedResourceStore } from './resource-store.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'argus-store-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

describeResourceStoreContract('embedded', async () => {
  const store = await EmbeddedResourceStore.open({ dir: await tempDir() });
  return { store, close: () => store.close() };
});

function captionRunOwnedBy(name: string, owner: { name: string; uid?: string }): NewResource<'CaptionRun'> {
  return {
    apiVersion: 'argus.dev/v1alpha1',
    kind: 'CaptionRun',
    metadata: {
      name,
      namespace: 'default',
      ownerReferences: [
        {
          apiVersion: 'argus.dev/v1alpha1',
          kind: 'IngestJob',
          name: owner.name,
          uid: owner.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: {
      rtspUrl: 'rtsp://127.0.0.1:8554/cam',
      prompt: 'describe',
      modelName: 'vlm',
      pipelineName: 'default',
      runName: 'run',
      maxTokens: 64,
    },
  };
}

describe('EmbeddedResourceStore on disk', () => {
  it('keeps one JSON file per object and serves it again after a restart', async () => {
    const dir = await tempDir();
    const first = await EmbeddedResourceStore.open({ dir });
    const created = await first.create('IngestJob', newIngestJob('job-a', 'team'));
    const running = await first.updateStatus('IngestJob', { ...created, status: { state: 'running' } });
    await first.close();
    const file = JSON.parse(await fs.readFile(path.join(dir, 'ingestjobs', 'team', 'job-a.json'), 'utf8'));
    expect(file).toEqual(running);
    const second = await EmbeddedResourceStore.open({ dir });
    expect(await second.get('IngestJob', 'team', 'job-a')).toEqual(running);
    await second.close();
  });

  it('never hands out a resourceVersion again after a restart, even once the newest object is deleted', async () => {
    const dir = await tempDir();
    const first = await EmbeddedResourceStore.open({ dir });
    await first.create('IngestJob', newIngestJob('job-a'));
    const b = await first.create('IngestJob', newIngestJob('job-b'));
    await first.delete('IngestJob', 'default', 'job-b');
    await first.close();
    const second = await EmbeddedResourceStore.open({ dir });
    const c = await second.create('IngestJob', newIngestJob('job-c'));
    expect(Number(c.metadata.resourceVersion)).toBeGreaterThan(Number(b.metadata.resourceVersion));
    await second.close();
  });

  it('ignores and removes the temp file of an interrupted write, and skips a damaged file with a warning', async () => {
    const dir = await tempDir();
    const first = await EmbeddedResourceStore.open({ dir });
    const created = await first.create('IngestJob', newIngestJob('job-a'));
    await first.close();
    const nsDir = path.join(dir, 'ingestjobs', 'default');
    const torn = path.join(nsDir, '.job-a.json.0123456789ab.tmp');
    await fs.writeFile(torn, '{"apiVersion":"argus.dev/v1alpha1","kind":"IngestJob","meta');
    await fs.writeFile(path.join(nsDir, 'job-z.json'), '{"half":');
    const warnings: string[] = [];
    const second = await EmbeddedResourceStore.open({ dir, onWarning: (message) => warnings.push(message) });
    expect(await second.list('IngestJob')).toEqual([created]);
    await expect(fs.access(torn)).rejects.toThrow();
    expect(warnings).toEqual(['a resource file could not be read; it is ignored']);
    await second.close();
  });

  it('deletes the objects a deleted object owns (owner-reference cascade)', async () => {
    const store = await EmbeddedResourceStore.open({ dir: await tempDir() });
    const owner = await store.create('IngestJob', newIngestJob('job-a'));
    await store.create('CaptionRun', captionRunOwnedBy('owned', owner.metadata));
    await store.create('CaptionRun', captionRunOwnedBy('stranger', { name: 'job-a', uid: 'another-uid' }));
    await store.delete('IngestJob', 'default', 'job-a');
    expect((await store.list('CaptionRun')).map((o) => o.metadata.name)).toEqual(['stranger']);
    await store.close();
  });

  it('marks an object with finalizers for deletion and deletes it once they are cleared', async () => {
    const store = await EmbeddedResourceStore.open({ dir: await tempDir() });
    const created = await store.create('IngestJob', {
      ...newIngestJob('job-a'),
      metadata: { name: 'job-a', namespace: 'default', finalizers: ['argus.dev/cleanup'] },
    });
    expect(await store.delete('IngestJob', 'default', 'job-a')).toBe(true);
    const marked = await store.get('IngestJob', 'default', 'job-a');
    expect(marked?.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(marked?.metadata.uid).toBe(created.metadata.uid);
    await store.update('IngestJob', { ...marked!, metadata: { ...marked!.metadata, finalizers: [] } });
    expect(await store.get('IngestJob', 'default', 'job-a')).toBeUndefined();
    await store.close();
  });

  it("refuses an object larger than etcd's request limit, as a real cluster would", async () => {
    const store = await EmbeddedResourceStore.open({ dir: await tempDir() });
    const job = newIngestJob('huge', 'default', 500);
    job.spec.items = job.spec.items.map((item, i) => ({
      ...item,
      url: `http://127.0.0.1/${String(i).padEnd(2000, 'x')}`,
      path: `dir/${String(i).padEnd(1000, 'y')}`,
      key: `${item.videoId}/${'k'.repeat(1000)}`,
    }));
    await expect(store.create('IngestJob', job)).rejects.toMatchObject({
      name: 'InvalidError',
      problems: [expect.stringContaining("etcd's request size")],
    });
    expect(await store.get('IngestJob', 'default', 'huge')).toBeUndefined();
    await store.close();
  });

  it('requires the resourceVersion that was read on update', async () => {
    const store = await EmbeddedResourceStore.open({ dir: await tempDir() });
    const created = await store.create('IngestJob', newIngestJob('job-a'));
    const { resourceVersion: _rv, ...metadata } = created.metadata;
    await expect(store.update('IngestJob', { ...created, metadata })).rejects.toThrow(/resourceVersion/);
    await store.close();
  });
});
