import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ensureDefaultModels } from '../../test/support/models.js';
import { ConfigError } from '../lib/config/index.js';
import { createLogger } from '../lib/log/index.js';
import { startCaptionRuns } from './main.js';
import { subscribe } from '../../test/support/mqtt-broker.js';
import { openTestControlPlane, sendJson } from './testing/serve-app.js';

let dataDir: string;
let env: NodeJS.ProcessEnv;
const logger = createLogger({ service: 'caption-runs-main-test', level: 'error', json: true });

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'caption-runs-main-'));
  env = {
    ARGUS_MODELS_DIR: await ensureDefaultModels(),
    ARGUS_DATA_DIR: dataDir,
    CAPTION_RUNS_PORT: '0',
    CAPTION_RUNS_MQTT_PORT: '0',
  };
}, 120_000);

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('startCaptionRuns', () => {
  it('serves on its port and keeps runs across a restart of the process (service and control plane)', async () => {
    let plane = await openTestControlPlane(dataDir, logger);
    const first = await startCaptionRuns(env, plane.controlPlane, logger);
    let created: unknown;
    try {
      expect((await (await fetch(`${first.url}/api/health`)).json()).status).toBe('healthy');
      // Without MQTT_BROKER the service runs the embedded broker on loopback.
      expect(first.brokerUrl).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
      await (await subscribe(first.brokerUrl, 'live-video-captioning/+')).close();
      const response = await sendJson(`${first.url}/api/generate_captions_alerts`, {
        rtspUrl: 'rtsp://127.0.0.1:8554/cam',
        runName: 'dock',
      });
      expect(response.status).toBe(200);
      created = await response.json();
    } finally {
      await first.close();
      await plane.close();
    }
    plane = await openTestControlPlane(dataDir, logger);
    const second = await startCaptionRuns(env, plane.controlPlane, logger);
    try {
      expect(await (await fetch(`${second.url}/api/generate_captions_alerts`)).json()).toEqual([created]);
    } finally {
      await second.close();
      await plane.close();
    }
  }, 60_000);

  it('refuses to start with an invalid configuration, listing the problem', async () => {
    const plane = await openTestControlPlane(dataDir, logger);
    try {
      await expect(
        startCaptionRuns({ ...env, CAPTION_RUNS_MEDIA_ROOTT: '/x' }, plane.controlPlane, logger),
      ).rejects.toBeInstanceOf(ConfigError);
    } finally {
      await plane.close();
    }
  });
});
