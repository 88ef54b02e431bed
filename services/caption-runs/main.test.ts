import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ensureDefaultModels } from '../../test/support/models.js';
import { startTestBroker, subscribe, type TestBroker } from '../../test/support/mqtt-broker.js';
import { ConfigError } from '../lib/config/index.js';
import { createLogger } from '../lib/log/index.js';
import { startCaptionRuns } from './main.js';
import { makeStreetVideo, STREET_SCENES } from './testing/photo-video.js';
import { statusReaches } from './testing/run-status.js';
import { rtspServerUnavailable, startRtspServer } from './testing/rtsp-server.js';
import { openTestControlPlane, sendJson } from './testing/serve-app.js';

let dataDir: string;
let env: NodeJS.ProcessEnv;
let broker: TestBroker;
const logger = createLogger({ service: 'caption-runs-main-test', level: 'error', json: true });
const unavailable = rtspServerUnavailable();
if (unavailable) console.warn(`the restart with an active run is skipped: ${unavailable}`);
const itWithRtsp = unavailable ? it.skip : it;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'caption-runs-main-'));
  env = { ARGUS_MODELS_DIR: await ensureDefaultModels(), ARGUS_DATA_DIR: dataDir, CAPTION_RUNS_PORT: '0' };
  broker = await startTestBroker();
}, 120_000);

afterAll(async () => {
  await broker?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** The value a Prometheus text exposition gives metric `name` of run `runId`, or 0 when it has no such line. */
function runValue(text: string, name: string, runId: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`run_id="${runId}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('startCaptionRuns', () => {
  itWithRtsp(
    'a run captioning when the service and its control plane restart captions on, counting on; /metrics shows it from the worker’s reports',
    async () => {
      const camera = await startRtspServer();
      const captions = await subscribe(broker.url, 'live-video-captioning/+');
      let plane = await openTestControlPlane(dataDir, logger);
      let service = await startCaptionRuns(env, plane.controlPlane, broker.url, logger);
      try {
        await plane.startControllers();
        expect((await (await fetch(`${service.url}/api/health`)).json()).status).toBe('healthy');
        const response = await sendJson(`${service.url}/api/generate_captions_alerts`, {
          rtspUrl: camera.url,
          runName: 'dock',
          frameRate: 4,
          frameWidth: 160,
          frameHeight: 120,
        });
        expect(response.status).toBe(200);
        const first = await captions.waitFor((m) => m.topic === 'live-video-captioning/dock');
        // The worker's reports reach /metrics over MQTT (a report follows each caption: wait for the second caption).
        await captions.waitFor(
          (m) =>
            m.topic === 'live-video-captioning/dock' && m.payload.metadata.frame_id > first.payload.metadata.frame_id,
        );
        let exposition = '';
        for (let i = 0; i < 1000 && !runValue(exposition, 'caption_runs_captions_total', 'dock'); i++) {
          exposition = await (await fetch(`${service.url}/metrics`)).text();
        }
        expect(runValue(exposition, 'caption_runs_captions_total', 'dock')).toBeGreaterThanOrEqual(1);
        expect(runValue(exposition, 'caption_runs_frames_total', 'dock')).toBeGreaterThanOrEqual(1);
      } finally {
        await plane.stopWork();
        await service.close();
        await plane.close();
      }
      const stoppedAt = captions.messages.filter((m) => m.topic === 'live-video-captioning/dock').at(-1)!;
      plane = await openTestControlPlane(dataDir, logger);
      service = await startCaptionRuns(env, plane.controlPlane, broker.url, logger);
      try {
        const at = captions.messages.length;
        await plane.startControllers();
        const run = await (await fetch(`${service.url}/api/generate_captions_alerts/dock`)).json();
        expect(run).toMatchObject({ runId: 'dock', active: true });
        const resumed = await captions.waitFor((m) => m.topic === 'live-video-captioning/dock', at);
        expect(resumed.payload.metadata.frame_id).toBeGreaterThan(stoppedAt.payload.metadata.frame_id);
        expect((await fetch(`${service.url}/api/generate_captions_alerts/dock`, { method: 'DELETE' })).status).toBe(
          200,
        );
      } finally {
        await plane.stopWork();
        await service.close();
        await plane.close();
        await captions.close();
        await camera.stop();
      }
    },
    90_000,
  );

  it('captions a file below CAPTION_RUNS_MEDIA_ROOT end to end (API → controller → worker → MQTT → stop); a path outside it is refused', async () => {
    const street = await makeStreetVideo();
    const root = path.join(dataDir, 'file-run');
    const mediaRoot = path.join(root, 'media');
    await mkdir(path.join(mediaRoot, 'demo'), { recursive: true });
    await copyFile(street, path.join(mediaRoot, 'demo', 'street.mp4'));
    // The same video beside the root: a real file, but outside it.
    await copyFile(street, path.join(root, 'outside.mp4'));
    const captions = await subscribe(broker.url, 'live-video-captioning/+');
    const plane = await openTestControlPlane(root, logger);
    const service = await startCaptionRuns(
      { ...env, ARGUS_DATA_DIR: root, CAPTION_RUNS_MEDIA_ROOT: mediaRoot },
      plane.controlPlane,
      broker.url,
      logger,
    );
    const runs = `${service.url}/api/generate_captions_alerts`;
    try {
      await plane.startControllers();
      for (const outside of [
        '../outside.mp4',
        path.join(root, 'outside.mp4'),
        `file://${path.join(root, 'outside.mp4')}`,
      ]) {
        const refused = await sendJson(runs, { rtspUrl: outside, runName: 'escape' });
        expect([outside, refused.status]).toEqual([outside, 422]);
        expect((await refused.json()).detail).toEqual([expect.objectContaining({ loc: ['body', 'rtspUrl'] })]);
      }
      expect(await (await fetch(runs)).json()).toEqual([]);

      const started = await sendJson(runs, { rtspUrl: 'demo/street.mp4', runName: 'demo', frameRate: 2 });
      expect(started.status).toBe(200);
      expect(await started.json()).toMatchObject({ runId: 'demo', rtspUrl: 'demo/street.mp4' });
      // The photos' objects, found by the detector in the file's frames and named by the offline caption.
      for (const { label } of STREET_SCENES) {
        const seen = await captions.waitFor(
          (m) =>
            m.topic === 'live-video-captioning/demo' &&
            m.payload.metadata.detections.some((d: { label: string }) => d.label === label),
        );
        expect(seen.payload.metadata).toMatchObject({ model: 'offline-detection-captioner', img_format: 'jpeg' });
      }
      const stopped = await fetch(`${runs}/demo`, { method: 'DELETE' });
      expect(await stopped.json()).toEqual({ status: 'stopped', runId: 'demo' });
      const finished = await statusReaches(plane.controlPlane.resources, 'demo', (r) => r.status?.phase === 'Stopped');
      expect(finished.status).toMatchObject({ finishedTime: expect.any(String) });
      expect((finished.status?.captionsPublished ?? 0) >= STREET_SCENES.length).toBe(true);
    } finally {
      await plane.stopWork();
      await service.close();
      await plane.close();
      await captions.close();
    }
  }, 90_000);

  it('refuses to start with an invalid configuration, listing the problem', async () => {
    const plane = await openTestControlPlane(dataDir, logger);
    try {
      await expect(
        startCaptionRuns({ ...env, CAPTION_RUNS_MEDIA_ROOTT: '/x' }, plane.controlPlane, broker.url, logger),
      ).rejects.toBeInstanceOf(ConfigError);
    } finally {
      await plane.close();
    }
  });
});
