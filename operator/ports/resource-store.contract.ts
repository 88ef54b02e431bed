import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { IngestJob, IngestItemResult, ResourceKinds } from '../api/index.js';
import { AlreadyExistsError, ConflictError, InvalidError, NotFoundError } from './errors.js';
import type { NewResource, ResourceStore, WatchEvent } from './resource-store.js';
import { updateStatusWithRetry } from './status-update.js';

/** A store under test and how to dispose of it. */
export interface ResourceStoreUnderTest {
  store: ResourceStore;
  close(): Promise<void>;
}

/** A valid new IngestJob (items with videoIds, as dataprep creates them). */
export function newIngestJob(name: string, namespace = 'default', items = 2): NewResource<'IngestJob'> {
  return {
    apiVersion: 'argus.dev/v1alpha1',
    kind: 'IngestJob',
    metadata: { name, namespace },
    spec: {
      source: 'batch_existing',
      bucket: 'videos',
      frameInterval: 15,
      detection: { enabled: false, confidence: 0.5 },
      tags: [],
      storeCopy: true,
      items: Array.from({ length: items }, (_, i) => ({ identifier: `item-${i}.mp4`, videoId: `video-${i}` })),
    },
  };
}

/** Events seen by a watch, with a way to wait for the ones a test expects. */
export class EventLog<K extends keyof ResourceKinds> {
  readonly events: WatchEvent<K>[] = [];
  private waiters: Array<{ done: () => boolean; resolve: () => void }> = [];

  readonly handler = (event: WatchEvent<K>): void => {
    this.events.push(event);
    this.waiters = this.waiters.filter((w) => (w.done() ? (w.resolve(), false) : true));
  };

  /** Resolves once `count` events have arrived. */
  async waitFor(count: number): Promise<WatchEvent<K>[]> {
    if (this.events.length < count) {
      await new Promise<void>((resolve) => this.waiters.push({ done: () => this.events.length >= count, resolve }));
    }
    return this.events.slice(0, count);
  }

  /** Short descriptions ("ADDED a") of the events so far. */
  summary(): string[] {
    return this.events.map((e) => `${e.type} ${e.object.metadata.name}`);
  }
}

/**
 * The ResourceStore contract: every implementation (embedded, kubernetes against a fake API server) must pass it.
 * `open` makes an empty store; the suite closes it after each test.
 */
export function describeResourceStoreContract(label: string, open: () => Promise<ResourceStoreUnderTest>): void {
  describe(`ResourceStore contract: ${label}`, () => {
    let subject: ResourceStoreUnderTest;
    let store: ResourceStore;

    beforeEach(async () => {
      subject = await open();
      store = subject.store;
    });
    afterEach(async () => {
      await subject.close();
    });

    it('creates an object with the server-set metadata and no status, and reads it back', async () => {
      const created = await store.create('IngestJob', {
        ...newIngestJob('job-a'),
        status: { state: 'completed' },
      } as NewResource<'IngestJob'>);
      expect(created.metadata).toMatchObject({ name: 'job-a', namespace: 'default', generation: 1 });
      expect(created.metadata.uid).toEqual(expect.any(String));
      expect(created.metadata.resourceVersion).toEqual(expect.any(String));
      expect(Date.parse(created.metadata.creationTimestamp ?? '')).not.toBeNaN();
      expect(created.status).toBeUndefined();
      expect(await store.get('IngestJob', 'default', 'job-a')).toEqual(created);
      expect(await store.get('IngestJob', 'default', 'nope')).toBeUndefined();
    });

    it('refuses a taken name with AlreadyExistsError', async () => {
      await store.create('IngestJob', newIngestJob('job-a'));
      await expect(store.create('IngestJob', newIngestJob('job-a'))).rejects.toBeInstanceOf(AlreadyExistsError);
    });

    it('refuses unknown fields, wrong enums, missing fields and bad names with InvalidError listing each problem', async () => {
      const bad = newIngestJob('job-a');
      (bad.spec as Record<string, unknown>).surprise = 1;
      (bad.spec as Record<string, unknown>).source = 'carrier_pigeon';
      delete (bad.spec as Partial<IngestJob['spec']>).bucket;
      const error = await store.create('IngestJob', bad).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidError);
      const problems = (error as InvalidError).problems.join('\n');
      expect(problems).toMatch(/surprise/);
      expect(problems).toMatch(/source/);
      expect(problems).toMatch(/bucket/);
      await expect(store.create('IngestJob', newIngestJob('Job_A'))).rejects.toBeInstanceOf(InvalidError);
      await expect(store.create('IngestJob', newIngestJob('job-a', 'Bad.NS'))).rejects.toBeInstanceOf(InvalidError);
      const empty = newIngestJob('job-b');
      empty.spec.items = [];
      await expect(store.create('IngestJob', empty)).rejects.toBeInstanceOf(InvalidError);
      expect(await store.list('IngestJob')).toEqual([]);
    });

    it('lists one namespace or all of them', async () => {
      await store.create('IngestJob', newIngestJob('job-a', 'one'));
      await store.create('IngestJob', newIngestJob('job-b', 'two'));
      await store.create('IngestJob', newIngestJob('job-c', 'two'));
      expect((await store.list('IngestJob', 'two')).map((o) => o.metadata.name).sort()).toEqual(['job-b', 'job-c']);
      expect((await store.list('IngestJob')).map((o) => o.metadata.name).sort()).toEqual(['job-a', 'job-b', 'job-c']);
      expect(await store.list('CaptionRun')).toEqual([]);
    });

    it('moves generation on spec changes only, and ignores status on update', async () => {
      const created = await store.create('IngestJob', newIngestJob('job-a'));
      const labelled = await store.update('IngestJob', {
        ...created,
        metadata: { ...created.metadata, labels: { team: 'video' } },
        status: { state: 'failed' },
      });
      expect(labelled.metadata.generation).toBe(1);
      expect(labelled.metadata.labels).toEqual({ team: 'video' });
      expect(labelled.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
      expect(labelled.status).toBeUndefined();
      const cancelled = await store.update('IngestJob', {
        ...labelled,
        spec: { ...labelled.spec, cancelRequested: true },
      });
      expect(cancelled.metadata.generation).toBe(2);
      expect(cancelled.spec.cancelRequested).toBe(true);
      expect(await store.get('IngestJob', 'default', 'job-a')).toEqual(cancelled);
    });

    it('writes status through updateStatus and ignores everything else there', async () => {
      const created = await store.create('IngestJob', newIngestJob('job-a'));
      const written = await store.updateStatus('IngestJob', {
        ...created,
        spec: { ...created.spec, bucket: 'elsewhere' },
        status: { state: 'running', total: 2, progress: '0/2' },
      });
      expect(written.status).toEqual({ state: 'running', total: 2, progress: '0/2' });
      expect(written.spec.bucket).toBe('videos');
      expect(written.metadata.generation).toBe(1);
      await expect(
        store.updateStatus('IngestJob', { ...written, status: { state: 'exploded' } } as unknown as IngestJob),
      ).rejects.toBeInstanceOf(InvalidError);
      await expect(
        store.updateStatus('IngestJob', { ...written, status: { unknownField: 1 } } as unknown as IngestJob),
      ).rejects.toBeInstanceOf(InvalidError);
    });

    it('answers a stale resourceVersion with ConflictError and a missing object with NotFoundError', async () => {
      const created = await store.create('IngestJob', newIngestJob('job-a'));
      await store.updateStatus('IngestJob', { ...created, status: { state: 'running' } });
      await expect(store.updateStatus('IngestJob', { ...created, status: { state: 'failed' } })).rejects.toBeInstanceOf(
        ConflictError,
      );
      await expect(
        store.update('IngestJob', { ...created, spec: { ...created.spec, cancelRequested: true } }),
      ).rejects.toBeInstanceOf(ConflictError);
      const gone = { ...created, metadata: { ...created.metadata, name: 'job-gone' } };
      await expect(store.update('IngestJob', gone)).rejects.toBeInstanceOf(NotFoundError);
      expect((await store.get('IngestJob', 'default', 'job-a'))?.status).toEqual({ state: 'running' });
    });

    it('answers a write that changes nothing with the object as it is', async () => {
      const created = await store.create('IngestJob', newIngestJob('job-a'));
      const same = await store.update('IngestJob', created);
      expect(same.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    });

    it('deletes: true when the object was there, false when it was not', async () => {
      await store.create('IngestJob', newIngestJob('job-a'));
      expect(await store.delete('IngestJob', 'default', 'job-a')).toBe(true);
      expect(await store.get('IngestJob', 'default', 'job-a')).toBeUndefined();
      expect(await store.delete('IngestJob', 'default', 'job-a')).toBe(false);
      await store.create('IngestJob', newIngestJob('job-a'));
      expect((await store.get('IngestJob', 'default', 'job-a'))?.metadata.generation).toBe(1);
    });

    it('loses no result when many writers update status at once (updateStatusWithRetry)', async () => {
      await store.create('IngestJob', newIngestJob('job-a', 'default', 12));
      await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          updateStatusWithRetry(store, 'IngestJob', 'default', 'job-a', (latest) => {
            const result: IngestItemResult = { index, identifier: `item-${index}.mp4`, status: 'success' };
            return { ...latest.status, items: [...(latest.status?.items ?? []), result] };
          }),
        ),
      );
      const items = (await store.get('IngestJob', 'default', 'job-a'))?.status?.items ?? [];
      expect(items.map((i) => i.index).sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
    });

    it('watches: ADDED for what exists, then every change in order, in its namespace only, until stopped', async () => {
      const a = await store.create('IngestJob', newIngestJob('job-a'));
      await store.create('IngestJob', newIngestJob('job-x', 'other'));
      const log = new EventLog<'IngestJob'>();
      const watch = await store.watch('IngestJob', 'default', log.handler);
      await log.waitFor(1);
      const running = await store.updateStatus('IngestJob', { ...a, status: { state: 'running' } });
      await store.create('IngestJob', newIngestJob('job-y', 'other'));
      await store.create('IngestJob', newIngestJob('job-b'));
      await store.delete('IngestJob', 'default', 'job-a');
      const events = await log.waitFor(4);
      expect(log.summary()).toEqual(['ADDED job-a', 'MODIFIED job-a', 'ADDED job-b', 'DELETED job-a']);
      expect(events[1].object.status).toEqual({ state: 'running' });
      expect(events[1].object.metadata.resourceVersion).toBe(running.metadata.resourceVersion);
      await watch.stop();
      await store.create('IngestJob', newIngestJob('job-c'));
      const all = new EventLog<'IngestJob'>();
      const second = await store.watch('IngestJob', undefined, all.handler);
      await all.waitFor(4);
      expect(all.summary().sort()).toEqual(['ADDED job-b', 'ADDED job-c', 'ADDED job-x', 'ADDED job-y']);
      await second.stop();
      expect(log.summary()).toHaveLength(4);
    });
  });
}
