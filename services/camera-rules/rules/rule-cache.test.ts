import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EmbeddedResourceStore } from '../../../operator/drivers/embedded/index.js';
import { KubernetesResourceStore } from '../../../operator/drivers/kubernetes/index.js';
import { CAMERA_WATCHER_WORKER_RULES } from '../../../operator/drivers/kubernetes/rbac.js';
import { FakeApiServer } from '../../../operator/drivers/kubernetes/testing/fake-api-server.js';
import type { ResourceStore } from '../../../operator/ports/index.js';
import { createLogger } from '../../lib/log/index.js';
import { RuleBook } from './rule-book.js';
import { RuleCache } from './rule-cache.js';

const NS = 'cameras';
const logger = createLogger({ service: 'camera-rules-test', level: 'error', json: true });
logger.silent = true;

const rule = (id: string, label: string) =>
  ({ id, label, action: 'alert', camera: null, source: null, event_type: 'end' }) as const;

/**
 * The store as the cache sees it, and a way to wait until its watch has delivered the store's current rules: the
 * store's watch calls are wrapped so that each delivered event is noted (name → resourceVersion).
 */
function observed(store: ResourceStore) {
  const versions = new Map<string, string | undefined>();
  let wake: () => void = () => undefined;
  const spy = new Proxy(store, {
    get(target, property) {
      if (property === 'watch')
        return ((kind, namespace, handler) =>
          target.watch(kind, namespace, (event) => {
            handler(event);
            if (event.type === 'DELETED') versions.delete(event.object.metadata.name);
            else versions.set(event.object.metadata.name, event.object.metadata.resourceVersion);
            wake();
          })) as ResourceStore['watch'];
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  /** Resolves once the watch has delivered every rule of the store at its current version, and no deleted one. */
  const caughtUp = async () => {
    for (;;) {
      const current = await store.list('CameraRule', NS);
      const want = new Map(current.map((r) => [r.metadata.name, r.metadata.resourceVersion]));
      if (want.size === versions.size && [...want].every(([name, rv]) => versions.get(name) === rv)) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  return { spy, caughtUp };
}

/** The stores the cache runs on: the embedded one, and the API server as the camera-watcher worker's chart account. */
interface Stores {
  /** Where rules are written (the service's account). */
  writer: ResourceStore;
  /** What the watcher worker reads and claims with. */
  worker: ResourceStore;
  /** Breaks the store's watches (a closed stream, a compacted history); undefined where nothing can break. */
  breakWatches?: (how: 'closed' | 'compacted') => void;
  close(): Promise<void>;
}

describe.each([
  [
    'embedded store',
    async (): Promise<Stores> => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-cache-'));
      const store = await EmbeddedResourceStore.open({ dir });
      return {
        writer: store,
        worker: store,
        close: async () => {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'kubernetes driver (fake API server, the worker account of CAMERA_WATCHER_WORKER_RULES)',
    async (): Promise<Stores> => {
      const fake = await FakeApiServer.start({ admin: 'admin', worker: CAMERA_WATCHER_WORKER_RULES });
      const backoff = { restartBackoff: { baseMs: 1, maxMs: 20 } };
      return {
        writer: new KubernetesResourceStore(fake.kubeConfig('admin'), backoff),
        worker: new KubernetesResourceStore(fake.kubeConfig('worker'), backoff),
        breakWatches: (how) => (how === 'closed' ? fake.closeWatches() : fake.compact()),
        close: async () => {
          // Only what the worker's account grants was asked for.
          expect(fake.requests.filter((r) => r.status === 403).map((r) => `${r.method} ${r.path}`)).toEqual([]);
          await fake.close();
        },
      };
    },
  ],
])('the rule cache (the store watched) on the %s', (name, open) => {
  let stores: Stores;
  let book: RuleBook;
  beforeEach(async () => {
    stores = await open();
    book = new RuleBook(stores.writer, NS, logger);
  });
  afterEach(() => stores.close());

  it('holds the rules there were, then follows adds, counts and deletes, in the book’s order', async () => {
    await book.add(rule('first', 'person'));
    await book.add(rule('second', 'car'));
    const { spy, caughtUp } = observed(stores.worker);
    const cache = new RuleCache(spy, NS);
    expect(await cache.list()).toEqual(await book.list());

    await book.add(rule('third', 'dog'));
    // The worker claims with its own account (get, then a status write).
    await new RuleBook(stores.worker, NS, logger).claim('second', 'e1', 'porch', new Date(), 60_000);
    await book.remove('first');
    await caughtUp();
    const listed = await cache.list();
    expect(listed).toEqual(await book.list());
    expect(listed.map((r) => [r.id, r.count])).toEqual([
      ['second', 1],
      ['third', 0],
    ]);
    await cache.close();
    await expect(cache.list()).rejects.toThrow(/closed/);
  });

  // The embedded store's watch cannot break (it is in-process): only the API server's is ended or compacted.
  (name.startsWith('kubernetes') ? it : it.skip)(
    'follows the store across a watch the server ended and a history it compacted (410: listed again)',
    async () => {
      await book.add(rule('first', 'person'));
      const { spy, caughtUp } = observed(stores.worker);
      const cache = new RuleCache(spy, NS);
      expect((await cache.list()).map((r) => r.id)).toEqual(['first']);

      stores.breakWatches!('closed');
      await book.add(rule('second', 'car'));
      await caughtUp();
      expect((await cache.list()).map((r) => r.id)).toEqual(['first', 'second']);

      stores.breakWatches!('compacted');
      await book.remove('first');
      await book.add(rule('third', 'dog'));
      await caughtUp();
      expect(await cache.list()).toEqual(await book.list());
      expect((await cache.list()).map((r) => r.id)).toEqual(['second', 'third']);
      await cache.close();
    },
  );
});

describe('the rule cache while the API server has not listed the rules yet (an outage)', () => {
  it('gives up a list when its signal aborts or the cache closes, closes at once, and stops the watch once it opens', async () => {
    const fake = await FakeApiServer.start({ admin: 'admin', worker: CAMERA_WATCHER_WORKER_RULES });
    let answer!: () => void;
    const held = new Promise<undefined>((resolve) => (answer = () => resolve(undefined)));
    let asked!: () => void;
    const listAsked = new Promise<void>((resolve) => (asked = resolve));
    // The worker's list of CameraRules is held: the watch cannot open.
    fake.intercept((req) => {
      if (req.user !== 'worker' || !req.path.endsWith('/camerarules')) return undefined;
      asked();
      return held;
    });
    const worker = new KubernetesResourceStore(fake.kubeConfig('worker'), { restartBackoff: { baseMs: 1, maxMs: 20 } });
    let stopped!: () => void;
    const watchStopped = new Promise<void>((resolve) => (stopped = resolve));
    const store = new Proxy(worker, {
      get(target, property) {
        if (property === 'watch')
          return (async (kind, namespace, handler) => {
            const watch = await target.watch(kind, namespace, handler);
            return { stop: () => watch.stop().then(stopped) };
          }) as ResourceStore['watch'];
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    try {
      const cache = new RuleCache(store, NS);
      const abort = new AbortController();
      const aborted = cache.list(abort.signal);
      await listAsked;
      abort.abort(new Error('the watcher stopped'));
      await expect(aborted).rejects.toThrow('the watcher stopped');

      const waiting = cache.list();
      await cache.close();
      await expect(waiting).rejects.toThrow(/closed/);

      // The server answers again: the watch opens, and is stopped then.
      answer();
      await watchStopped;
      await expect(cache.list()).rejects.toThrow(/closed/);
    } finally {
      await fake.close();
    }
  });
});
