import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describeResourceStoreContract, EventLog, newIngestJob } from '../../ports/resource-store.contract.js';
import { ConflictError, updateStatusWithRetry } from '../../ports/index.js';
import { DATAPREP_RULES, INGEST_WORKER_RULES, OPERATOR_RULES } from './rbac.js';
import { KubernetesResourceStore } from './resource-store.js';
import { FakeApiServer } from './testing/fake-api-server.js';

const BACKOFF = { baseMs: 1, maxMs: 20 };

describeResourceStoreContract('kubernetes (client-node against a fake API server)', async () => {
  const fake = await FakeApiServer.start();
  const store = new KubernetesResourceStore(fake.kubeConfig(), { restartBackoff: BACKOFF });
  return { store, close: () => fake.close() };
});

describe('KubernetesResourceStore at the HTTP boundary', () => {
  let fake: FakeApiServer;
  let store: KubernetesResourceStore;

  beforeEach(async () => {
    fake = await FakeApiServer.start({
      admin: 'admin',
      operator: OPERATOR_RULES,
      worker: INGEST_WORKER_RULES,
      dataprep: DATAPREP_RULES,
    });
    store = new KubernetesResourceStore(fake.kubeConfig('admin'), { restartBackoff: BACKOFF });
  });
  afterEach(() => fake.close());

  it('creates with POST on the collection, JSON, strict field validation, no status sent', async () => {
    await store.create('IngestJob', newIngestJob('job-a', 'media'));
    const [post] = fake.requests.filter((r) => r.method === 'POST');
    expect(post.path).toBe('/apis/argus.dev/v1alpha1/namespaces/media/ingestjobs');
    expect(post.contentType).toBe('application/json');
    expect(post.query).toEqual({ fieldValidation: 'Strict' });
    expect(post.body).toMatchObject({
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'IngestJob',
      metadata: { name: 'job-a' },
    });
    expect(post.body.status).toBeUndefined();
  });

  it('writes status with PUT on the status subresource carrying the resourceVersion read', async () => {
    const created = await store.create('IngestJob', newIngestJob('job-a'));
    await store.updateStatus('IngestJob', { ...created, status: { state: 'running' } });
    const put = fake.requests.find((r) => r.method === 'PUT')!;
    expect(put.path).toBe('/apis/argus.dev/v1alpha1/namespaces/default/ingestjobs/job-a/status');
    expect(put.contentType).toBe('application/json');
    expect(put.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('retries a status write that met a 409 Conflict: re-reads, then PUTs with the new resourceVersion', async () => {
    const created = await store.create('IngestJob', newIngestJob('job-a'));
    // Another writer gets in between this writer's read and its write, once.
    let raced = false;
    const stop = fake.intercept((req) => {
      if (req.method !== 'PUT' || raced) return undefined;
      raced = true;
      const latest = fake.get('argus.dev', 'ingestjobs', 'default', 'job-a');
      fake.put('argus.dev', 'ingestjobs', { ...latest, status: { state: 'running' } });
      return undefined;
    });
    const written = await updateStatusWithRetry(store, 'IngestJob', 'default', 'job-a', (latest) => ({
      ...latest.status,
      total: 2,
    }));
    stop();
    expect(written?.status).toEqual({ state: 'running', total: 2 });
    const puts = fake.requests.filter((r) => r.method === 'PUT');
    expect(puts.map((p) => p.status)).toEqual([409, 200]);
    expect(puts[0].body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(puts[1].body.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    expect(fake.requests.filter((r) => r.method === 'GET').length).toBe(2);
  });

  it('maps a stale replace to ConflictError without retrying by itself', async () => {
    const created = await store.create('IngestJob', newIngestJob('job-a'));
    await store.update('IngestJob', { ...created, spec: { ...created.spec, cancelRequested: true } });
    await expect(store.update('IngestJob', created)).rejects.toBeInstanceOf(ConflictError);
  });

  it('deletes with propagationPolicy Background', async () => {
    await store.create('IngestJob', newIngestJob('job-a'));
    await store.delete('IngestJob', 'default', 'job-a');
    const del = fake.requests.find((r) => r.method === 'DELETE')!;
    expect(del.path).toBe('/apis/argus.dev/v1alpha1/namespaces/default/ingestjobs/job-a');
    expect(del.query.propagationPolicy ?? del.body?.propagationPolicy).toBe('Background');
  });

  it('lists then watches from the list resourceVersion with bookmarks; re-watches from the last version after the server ends the stream', async () => {
    await store.create('IngestJob', newIngestJob('job-a'));
    const log = new EventLog<'IngestJob'>();
    const watch = await store.watch('IngestJob', 'default', log.handler);
    await log.waitFor(1);
    const first = await fake.waitForRequest((r) => r.query.watch === 'true');
    const list = fake.requests.find(
      (r) => r.method === 'GET' && r.query.watch === undefined && r.path.endsWith('/ingestjobs'),
    )!;
    expect(list.path).toBe('/apis/argus.dev/v1alpha1/namespaces/default/ingestjobs');
    expect(first.query).toMatchObject({ allowWatchBookmarks: 'true', resourceVersion: expect.any(String) });
    expect(Number(first.query.timeoutSeconds)).toBeGreaterThan(0);

    // A bookmark moves the informer's version without an event.
    await store.create('CaptionRun', {
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'CaptionRun',
      metadata: { name: 'run-a', namespace: 'default' },
      spec: { rtspUrl: 'rtsp://cam', prompt: 'p', modelName: 'm', pipelineName: 'p', runName: 'r', maxTokens: 10 },
    });
    const bookmarked = fake.get('argus.dev', 'captionruns', 'default', 'run-a').metadata.resourceVersion;
    fake.bookmark();
    fake.closeWatches();
    const second = await fake.waitForRequest((r) => r.query.watch === 'true' && r !== first);
    expect(second.query.resourceVersion).toBe(bookmarked);
    await store.create('IngestJob', newIngestJob('job-b'));
    await log.waitFor(2);
    expect(log.summary()).toEqual(['ADDED job-a', 'ADDED job-b']);
    // No relist happened: one list only.
    expect(
      fake.requests.filter((r) => r.path.endsWith('/ingestjobs') && r.method === 'GET' && !r.query.watch),
    ).toHaveLength(1);
    await watch.stop();
  });

  it('relists after 410 Gone and delivers what changed meanwhile (DELETED included)', async () => {
    await store.create('IngestJob', newIngestJob('job-a'));
    const log = new EventLog<'IngestJob'>();
    const watch = await store.watch('IngestJob', 'default', log.handler);
    await log.waitFor(1);
    // Changes the watch misses, then compaction: the stream ends with an ERROR event, code 410.
    fake.stallWatches();
    fake.remove('argus.dev', 'ingestjobs', 'default', 'job-a');
    await store.create('IngestJob', newIngestJob('job-b'));
    fake.compact();
    await log.waitFor(3);
    expect(log.summary().sort()).toEqual(['ADDED job-a', 'ADDED job-b', 'DELETED job-a']);
    const lists = fake.requests.filter((r) => r.path.endsWith('/ingestjobs') && r.method === 'GET' && !r.query.watch);
    expect(lists.length).toBe(2);
    await watch.stop();
  });

  it('starts again after a failed list and a failed watch (client-node 1.4 ListWatch stops on errors)', async () => {
    await store.create('IngestJob', newIngestJob('job-a'));
    const failures: unknown[] = [];
    store = new KubernetesResourceStore(fake.kubeConfig('admin'), {
      restartBackoff: BACKOFF,
      onWatchError: (_kind, error) => failures.push(error),
    });
    let lists = 0;
    let watches = 0;
    const stop = fake.intercept((r) => {
      if (r.method !== 'GET' || !r.path.endsWith('/ingestjobs')) return undefined;
      if (r.query.watch === 'true') return ++watches === 2 ? { status: 500, body: {} } : undefined;
      return ++lists === 1 ? { status: 503, body: {} } : undefined;
    });
    const log = new EventLog<'IngestJob'>();
    const watch = await store.watch('IngestJob', 'default', log.handler);
    expect(store.watchesSynced).toBe(true);
    await log.waitFor(1);
    fake.closeWatches();
    await fake.waitForRequest((r) => r.query.watch === 'true' && r.status === 200 && watches === 3);
    await store.create('IngestJob', newIngestJob('job-b'));
    await log.waitFor(2);
    stop();
    expect(log.summary()).toEqual(['ADDED job-a', 'ADDED job-b']);
    expect(failures).toHaveLength(2);
    await watch.stop();
  });

  it('lists a collection larger than one page completely, page by page (limit, then continue)', async () => {
    for (const name of ['job-e', 'job-a', 'job-d', 'job-b', 'job-c'])
      await store.create('IngestJob', newIngestJob(name));
    const paged = new KubernetesResourceStore(fake.kubeConfig('admin'), { restartBackoff: BACKOFF, listPageSize: 2 });
    expect((await paged.list('IngestJob')).map((j) => j.metadata.name).sort()).toEqual([
      'job-a',
      'job-b',
      'job-c',
      'job-d',
      'job-e',
    ]);
    const lists = fake.requests.filter((r) => r.method === 'GET' && r.query.watch !== 'true' && r.path.endsWith('s'));
    expect(lists.map((r) => [r.query.limit, r.query.continue !== undefined, r.response.items.length])).toEqual([
      ['2', false, 2],
      ['2', true, 2],
      ['2', true, 1],
    ]);
    // A watch's first list is the whole collection too.
    const log = new EventLog<'IngestJob'>();
    const watch = await paged.watch('IngestJob', undefined, log.handler);
    expect(log.summary().sort()).toEqual(['ADDED job-a', 'ADDED job-b', 'ADDED job-c', 'ADDED job-d', 'ADDED job-e']);
    await watch.stop();
  });

  it('lists again from the start when a continue token has expired (410 after compaction)', async () => {
    for (const name of ['job-a', 'job-b', 'job-c']) await store.create('IngestJob', newIngestJob(name));
    const paged = new KubernetesResourceStore(fake.kubeConfig('admin'), { restartBackoff: BACKOFF, listPageSize: 2 });
    let compacted = false;
    fake.intercept((r) => {
      if (compacted || !r.query.continue) return undefined;
      compacted = true;
      // A write between the pages, then compaction past the first page's version.
      fake.put('argus.dev', 'ingestjobs', {
        ...newIngestJob('job-d'),
        metadata: { name: 'job-d', namespace: 'default' },
      });
      fake.compact();
      return undefined;
    });
    const log = new EventLog<'IngestJob'>();
    const failures: unknown[] = [];
    const watching = new KubernetesResourceStore(fake.kubeConfig('admin'), {
      restartBackoff: BACKOFF,
      listPageSize: 2,
      onWatchError: (_kind, error) => failures.push(error),
    });
    const watch = await watching.watch('IngestJob', undefined, log.handler);
    expect(log.summary().sort()).toEqual(['ADDED job-a', 'ADDED job-b', 'ADDED job-c', 'ADDED job-d']);
    expect(fake.requests.filter((r) => r.query.continue).map((r) => r.status)).toEqual([410, 200]);
    expect(failures).toHaveLength(1);
    await watch.stop();
    expect((await paged.list('IngestJob')).length).toBe(4);
  });

  it("serves get from the watch's cache, live only until the watch holds its own write or after a conflict", async () => {
    const created = await store.create('IngestJob', newIngestJob('job-a'));
    const cached = new KubernetesResourceStore(fake.kubeConfig('admin'), { restartBackoff: BACKOFF });
    const gets = () => fake.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/ingestjobs/job-a')).length;
    const log = new EventLog<'IngestJob'>();
    const watch = await cached.watch('IngestJob', undefined, log.handler);
    await log.waitFor(1);
    expect((await cached.get('IngestJob', 'default', 'job-a'))?.metadata.uid).toBe(created.metadata.uid);
    expect(await cached.get('IngestJob', 'default', 'job-b')).toBeUndefined();
    expect(gets()).toBe(0);

    // Its own write: read live until the watch delivers that version, then from the cache again.
    fake.stallWatches();
    const written = await cached.updateStatus('IngestJob', { ...created, status: { state: 'running' } });
    expect((await cached.get('IngestJob', 'default', 'job-a'))?.metadata.resourceVersion).toBe(
      written.metadata.resourceVersion,
    );
    expect(gets()).toBe(1);
    await watch.stop();
    const log2 = new EventLog<'IngestJob'>();
    const rewatch = await cached.watch('IngestJob', undefined, log2.handler);
    await log2.waitFor(1);
    await cached.get('IngestJob', 'default', 'job-a');
    expect(gets()).toBe(1);

    // Another writer changes it while the watch lags: the write meets a conflict, and reads go to the API server while
    // the cache still holds the version that was sent.
    fake.stallWatches();
    const seen = (await cached.get('IngestJob', 'default', 'job-a'))!;
    fake.put('argus.dev', 'ingestjobs', {
      ...fake.get('argus.dev', 'ingestjobs', 'default', 'job-a'),
      status: { state: 'completed' },
    });
    await expect(cached.updateStatus('IngestJob', { ...seen, status: { state: 'failed' } })).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect((await cached.get('IngestJob', 'default', 'job-a'))?.status).toEqual({ state: 'completed' });
    expect(gets()).toBe(2);
    await rewatch.stop();
  });

  it('needs no more than OPERATOR_RULES, INGEST_WORKER_RULES and DATAPREP_RULES for what each does', async () => {
    const created = await store.create('IngestJob', newIngestJob('job-a'));
    const operator = new KubernetesResourceStore(fake.kubeConfig('operator'), { restartBackoff: BACKOFF });
    const log = new EventLog<'IngestJob'>();
    const watch = await operator.watch('IngestJob', undefined, log.handler);
    await log.waitFor(1);
    await operator.list('IngestJob');
    const running = await operator.updateStatus('IngestJob', { ...created, status: { state: 'running' } });
    await watch.stop();

    // dataprep: creates, reads, cancels.
    const dataprep = new KubernetesResourceStore(fake.kubeConfig('dataprep'));
    await dataprep.create('IngestJob', newIngestJob('job-c'));
    await dataprep.update('IngestJob', { ...running, spec: { ...running.spec, cancelRequested: true } });

    const worker = new KubernetesResourceStore(fake.kubeConfig('worker'));
    await updateStatusWithRetry(worker, 'IngestJob', 'default', 'job-a', (latest) => ({ ...latest.status, total: 2 }));
    await expect(worker.list('IngestJob')).rejects.toThrow(/HTTP 403 Forbidden/);
    await expect(worker.delete('IngestJob', 'default', 'job-a')).rejects.toThrow(/HTTP 403 Forbidden/);
    await expect(operator.create('IngestJob', newIngestJob('job-b'))).rejects.toThrow(/HTTP 403 Forbidden/);
    expect(await operator.delete('IngestJob', 'default', 'job-a')).toBe(true);
    await expect(
      operator.update('IngestJob', { ...running, metadata: { ...running.metadata, labels: { a: 'b' } } }),
    ).rejects.toThrow(/HTTP 403 Forbidden/);
    const forbidden = fake.requests.filter((r) => r.status === 403).map((r) => `${r.user} ${r.method}`);
    expect(forbidden).toEqual(['worker GET', 'worker DELETE', 'operator POST', 'operator PUT']);
  });

  it('the fake refuses a strategic merge patch of a custom resource with 415, as a real server does', async () => {
    await store.create('IngestJob', newIngestJob('job-a'));
    const api = fake.kubeConfig('admin').makeApiClient(CustomObjectsApi);
    const at = { group: 'argus.dev', version: 'v1alpha1', namespace: 'default', plural: 'ingestjobs', name: 'job-a' };
    const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
    await expect(api.patchNamespacedCustomObject({ ...at, body: {} }, strategic)).rejects.toMatchObject({ code: 415 });
    // What client-node 1.4 sends when no patch type is chosen: JSON patch, which custom resources accept.
    await api.patchNamespacedCustomObject({ ...at, body: [] }).catch(() => undefined);
    expect(fake.requests.filter((r) => r.method === 'PATCH').map((r) => r.contentType)).toEqual([
      'application/strategic-merge-patch+json',
      'application/json-patch+json',
    ]);
  });
});
