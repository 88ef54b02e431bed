import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { QueueClosedError } from '../../lib/keyed-queue/index.js';
import { createLogger } from '../../lib/log/index.js';
import { parseSubscriptions, SubscriptionStore } from './subscription-store.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });

const GOOD = `
subscriptions:
  - alert_name: intrusion
    tools: [log_alert, capture_snapshot, trigger_webhook]
    tool_arguments:
      trigger_webhook: { url: "http://127.0.0.1:9/hook" }
    dedup: { enabled: true, fields: [source_id, metadata.zone], window_seconds: 30 }
    escalation: { threshold_consecutive: 3, additional_tools: [publish_mqtt] }
  - alert_name: smoke
`;

describe('subscriptions file', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'subs-'));
    file = path.join(dir, 'subscriptions.yaml');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('parses entries and fills the documented defaults', () => {
    const [intrusion, smoke] = parseSubscriptions(GOOD);
    expect(intrusion).toEqual({
      alert_name: 'intrusion',
      tools: ['log_alert', 'capture_snapshot', 'trigger_webhook'],
      tool_arguments: { trigger_webhook: { url: 'http://127.0.0.1:9/hook' } },
      dedup: {
        enabled: true,
        strategy: 'field_hash',
        fields: ['source_id', 'metadata.zone'],
        window_seconds: 30,
        on_missing: 'skip',
      },
      escalation: { threshold_consecutive: 3, additional_tools: ['publish_mqtt'] },
    });
    expect(smoke).toEqual({ alert_name: 'smoke', tools: [], tool_arguments: {} });
  });

  it('names every problem of a bad file', () => {
    expect(() =>
      parseSubscriptions(
        'subscriptions:\n  - tools: nope\n  - alert_name: a\n    dedup: { strategy: md5, window_seconds: 0 }\n',
      ),
    ).toThrow(
      /alert_name is required.*tools must be an array.*strategy must be \[field_hash\].*window_seconds must be greater/,
    );
    expect(() => parseSubscriptions('subscriptions:\n  - alert_name: a\n  - alert_name: a\n')).toThrow(/duplicate/);
    expect(() => parseSubscriptions('subscriptions: [unclosed')).toThrow();
  });

  it('loads, keeps the previous entries when a reload is bad, and reloads on its own when the file changes', async () => {
    await writeFile(file, GOOD);
    const store = new SubscriptionStore(file, logger, 20);
    try {
      expect(await store.reload()).toMatchObject({ ok: true, count: 2, error: null });
      expect(store.find('intrusion')?.tools).toContain('capture_snapshot');

      await writeFile(file, 'subscriptions:\n  - alert_name: 42\n    tools: 7\n');
      const bad = await store.reload();
      expect(bad).toMatchObject({ ok: false, count: 2 });
      expect(bad.error).toMatch(/tools must be an array/);
      expect(store.list().map((s) => s.alert_name)).toEqual(['intrusion', 'smoke']);
      expect(store.status().error).toBe(bad.error);

      store.watch();
      const reloaded = once(store, 'reloaded');
      await writeFile(file, 'subscriptions:\n  - alert_name: fire\n    tools: [publish_mqtt]\n');
      await reloaded;
      // A watch event may have come between the truncation and the write: then one more reload follows.
      while (!store.find('fire')) await once(store, 'reloaded');
      expect(store.list().map((s) => s.alert_name)).toEqual(['fire']);
      expect(store.status()).toMatchObject({ ok: true, error: null, count: 1 });
    } finally {
      store.close();
    }
  });

  it('reloads a ConfigMap volume when the kubelet swaps its ..data symlink', async () => {
    // The layout the kubelet makes: a timestamped directory, `..data` pointing at it, the key linked through it.
    const volume = path.join(dir, 'configmap');
    const first = '..2026_11_23_10_00_00.000000001';
    await mkdir(path.join(volume, first), { recursive: true });
    await writeFile(path.join(volume, first, 'subs.yaml'), 'subscriptions:\n  - alert_name: smoke\n');
    await symlink(first, path.join(volume, '..data'));
    await symlink(path.join('..data', 'subs.yaml'), path.join(volume, 'subs.yaml'));
    const store = new SubscriptionStore(path.join(volume, 'subs.yaml'), logger, 20);
    try {
      await store.reload();
      expect(store.list().map((s) => s.alert_name)).toEqual(['smoke']);
      store.watch();

      // An update: a new timestamped directory, a new `..data_tmp` link renamed over `..data`, the old one removed.
      const second = '..2026_11_23_10_05_00.000000002';
      await mkdir(path.join(volume, second));
      await writeFile(path.join(volume, second, 'subs.yaml'), 'subscriptions:\n  - alert_name: fire\n');
      const reloaded = once(store, 'reloaded');
      await symlink(second, path.join(volume, '..data_tmp'));
      await rename(path.join(volume, '..data_tmp'), path.join(volume, '..data'));
      await rm(path.join(volume, first), { recursive: true });
      const [outcome] = await reloaded;
      expect(outcome).toMatchObject({ ok: true, count: 1 });
      expect(store.list().map((s) => s.alert_name)).toEqual(['fire']);
    } finally {
      store.close();
    }
  });

  it('treats a missing file as no subscriptions, and no file as none at all', async () => {
    const missing = new SubscriptionStore(path.join(dir, 'absent.yaml'), logger);
    expect(await missing.reload()).toMatchObject({ ok: true, count: 0 });
    const none = new SubscriptionStore(undefined, logger);
    expect(await none.reload()).toMatchObject({ ok: true, count: 0, file: null });
    none.watch();
    none.close();
    await expect(none.reload()).rejects.toBeInstanceOf(QueueClosedError);
  });
});
