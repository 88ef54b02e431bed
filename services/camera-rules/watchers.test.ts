import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ResourceStore } from '../../operator/ports/index.js';
import type { Probe } from './health/reachability.js';
import { serveCameraRules, TEST_NAMESPACE, type ServedCameraRules } from './testing/serve-app.js';
import { WatcherBook, watcherObjectName } from './watchers/watcher-book.js';

let served: ServedCameraRules & { store: ResourceStore };
let searchUp = true;
const search: Probe = async () =>
  searchUp
    ? { reachable: true, detail: 'http://127.0.0.1:6007/v1/dataprep/health answers' }
    : { reachable: false, detail: 'http://127.0.0.1:6007/v1/dataprep/health does not answer: connection refused' };

const enable = (cameras: unknown, base = served.url) =>
  fetch(`${base}/watchers/enable`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ cameras }),
  });

beforeAll(async () => {
  served = await serveCameraRules({ search });
});

afterAll(async () => {
  await served?.close();
});

describe('watchers', () => {
  it('answers 503 and changes nothing while the search service does not answer', async () => {
    searchUp = false;
    try {
      const res = await enable([{ front_door: true }]);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        detail:
          'Search service is unreachable (http://127.0.0.1:6007/v1/dataprep/health does not answer: connection ' +
          'refused); no watcher was changed',
      });
      expect(await served.store.list('CameraWatcher', TEST_NAMESPACE)).toEqual([]);
      expect(await (await fetch(`${served.url}/watchers/mapping`)).json()).toEqual({ mapping: {} });
    } finally {
      searchUp = true;
    }
  });

  it('writes CameraWatcher resources and answers the mapping, enabled and disabled', async () => {
    const res = await enable([{ front_door: true }, { 'garage east': false }]);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      mapping: { front_door: true, 'garage east': false },
      enabled: ['front_door'],
      disabled: ['garage east'],
    });
    const watcher = await served.store.get('CameraWatcher', TEST_NAMESPACE, watcherObjectName('front_door'));
    expect(watcher?.spec).toEqual({ camera: 'front_door', enabled: true });
    expect(watcher?.metadata.name).toMatch(/^front-door-[0-9a-f]{8}$/);
    for (const path of ['/watchers/mapping', '/watchers/enable']) {
      expect(await (await fetch(`${served.url}${path}`)).json()).toEqual({
        mapping: { front_door: true, 'garage east': false },
      });
    }
  });

  it('flips a watcher off and on again (the last value of a camera named twice counts), another replica sees it', async () => {
    const res = await enable([{ front_door: true }, { front_door: false }]);
    expect(await res.json()).toMatchObject({ mapping: { front_door: false }, enabled: [], disabled: ['front_door'] });
    const watcher = await served.store.get('CameraWatcher', TEST_NAMESPACE, watcherObjectName('front_door'));
    expect(watcher?.spec.enabled).toBe(false);
    expect(watcher?.metadata.generation).toBe(2);
    const replica = new WatcherBook(served.store, TEST_NAMESPACE, served.logger);
    expect(await replica.mapping()).toEqual({ mapping: { front_door: false, 'garage east': false } });
  });

  it('answers the overrides with a warning when the store lookup fails, and 503 when a write fails', async () => {
    let failing = false;
    const flaky = new Proxy(served.store, {
      get: (target, key) =>
        failing && ['list', 'get', 'create', 'update'].includes(String(key))
          ? async () => {
              throw new Error('connect ECONNREFUSED 10.0.0.1:6443');
            }
          : Reflect.get(target, key),
    });
    const other = await serveCameraRules({ search, watchers: new WatcherBook(flaky, TEST_NAMESPACE, served.logger) });
    try {
      expect((await enable([{ porch: true }], other.url)).status).toBe(200);
      failing = true;
      const mapping = await (await fetch(`${other.url}/watchers/mapping`)).json();
      expect(mapping).toEqual({
        mapping: { porch: true },
        warning:
          'The watcher store (control plane) could not be read; the mapping shows only the changes this replica ' +
          'made since it started',
      });
      const res = await enable([{ porch: false }], other.url);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ detail: 'The watcher store (control plane) is unavailable' });
    } finally {
      await other.close();
    }
  });

  it('refuses invalid requests 422, each field named', async () => {
    const cases: Array<[unknown, string[]]> = [
      [[], ['body', 'cameras']],
      [[{}], ['body', 'cameras', '0']],
      [[{ front_door: 'maybe' }], ['body', 'cameras', '0', 'front_door']],
      ['front_door', ['body', 'cameras']],
    ];
    for (const [cameras, loc] of cases) {
      const res = await enable(cameras);
      expect(res.status).toBe(422);
      expect(((await res.json()) as any).detail[0].loc).toEqual(loc);
    }
  });
});
