import { loadCameraRulesConfig } from './config.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ServiceControlPlane } from '../../operator/ports/index.js';
import { EmbeddedResourceStore } from '../../operator/drivers/embedded/index.js';
import { createLogger } from '../lib/log/index.js';
import { startCameraRules } from './main.js';
import { startCameraWatcherWorker } from './watcher/start-camera-watcher.js';
import { FakeFrigate } from './testing/fake-frigate.js';
import { startTestBroker, type TestBroker } from '../../test/support/mqtt-broker.js';

let dir: string;
let store: EmbeddedResourceStore;
let controlPlane: ServiceControlPlane;
let broker: TestBroker;
let frigate: FakeFrigate;
const registered: string[] = [];
const logger = createLogger({ service: 'camera-rules-test', level: 'error', json: true });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-main-'));
  store = await EmbeddedResourceStore.open({ dir: path.join(dir, 'control-plane') });
  controlPlane = {
    resources: store,
    namespace: 'default',
    registerWorker: (name) => void registered.push(name),
  };
  broker = await startTestBroker();
  frigate = new FakeFrigate({ porch: { track: ['person', 'dog'] } });
  await frigate.start();
});

afterAll(async () => {
  await frigate?.close();
  await broker?.close();
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('startCameraRules', () => {
  it('starts on the directory recorder by default and stops cleanly', async () => {
    const service = await startCameraRules(
      loadCameraRulesConfig({
        ARGUS_DATA_DIR: dir,
        CAMERA_RULES_PORT: '0',
        CAMERA_RULES_DATAPREP_URL: 'http://127.0.0.1:1/v1/dataprep',
      }),
      controlPlane,
      logger,
    );
    try {
      expect(await (await fetch(`${service.url}/cameras`)).json()).toEqual([]);
      const health = (await (await fetch(`${service.url}/health`)).json()) as any;
      expect(health).toMatchObject({
        status: 'degraded',
        recorder: { kind: 'directory', reachable: true },
        search: { reachable: false, detail: expect.stringContaining('http://127.0.0.1:1/v1/dataprep/health') },
        broker: null,
      });
    } finally {
      await service.close();
    }
  });

  it('registers the camera-watcher worker, which a worker process can also build from the environment', async () => {
    expect(registered).toContain('camera-watcher');
    const started = await startCameraWatcherWorker(
      { ARGUS_DATA_DIR: dir, CAMERA_RULES_FRIGATE_URL: frigate.url, MQTT_BROKER: broker.url },
      store,
      logger,
    );
    try {
      // No such CameraWatcher: the worker has nothing to follow and returns.
      const signal = new AbortController().signal;
      await started.worker({ namespace: 'default', name: 'nobody', index: 0, completions: 1, signal });
    } finally {
      await started.close();
    }
  });

  it('uses Frigate when its URL is set, with its broker in health', async () => {
    const service = await startCameraRules(
      loadCameraRulesConfig({
        ARGUS_DATA_DIR: dir,
        CAMERA_RULES_PORT: '0',
        CAMERA_RULES_FRIGATE_URL: frigate.url,
        MQTT_BROKER: broker.url,
      }),
      controlPlane,
      logger,
    );
    try {
      expect(await (await fetch(`${service.url}/cameras`)).json()).toEqual([
        { name: 'porch', labels: ['person', 'dog'] },
      ]);
      const health = (await (await fetch(`${service.url}/health`)).json()) as any;
      expect(health.recorder).toMatchObject({ kind: 'frigate', reachable: true });
      expect(health.broker).toMatchObject({ detail: expect.stringContaining(broker.url) });
    } finally {
      await service.close();
    }
  });
});
