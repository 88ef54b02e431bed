import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mqtt from 'mqtt';
import {
  rtspServerUnavailable,
  startRtspServer,
  type RtspServer,
} from '../services/caption-runs/testing/rtsp-server.js';
import { multiPoseModelsDir } from '../services/frame-analysis/testing/serve-app.js';
import { readSse } from '../services/caption-runs/testing/sse-reader.js';
import { startArgusUp, type RunningArgusUp } from './support/argus-process.js';
import { subscribe } from './support/mqtt-broker.js';

let up: RunningArgusUp;
/** The broker `argus up` embeds (MQTT_BROKER unset). */
let brokerUrl: string;
let configDir: string;
const unavailable = rtspServerUnavailable();
if (unavailable) console.warn(`the caption run under argus up is skipped: ${unavailable}`);

beforeAll(async () => {
  // alert-dispatch publishes the caption run's alerts (rule door-watch) on MQTT.
  configDir = await mkdtemp(path.join(os.tmpdir(), 'argus-up-mqtt-'));
  const subscriptions = path.join(configDir, 'subscriptions.yaml');
  await writeFile(subscriptions, 'subscriptions:\n  - alert_name: door-watch\n    tools: [publish_mqtt]\n');
  up = await startArgusUp(['alert-dispatch', 'caption-runs'], await multiPoseModelsDir(), {
    ALERT_SUBSCRIPTIONS_FILE: subscriptions,
  });
  const ready = await up.process.waitForRecord((r) => r.message === 'argus is up');
  brokerUrl = /^embedded \((mqtt:\/\/127\.0\.0\.1:\d+)\)$/.exec(String(ready.mqtt))![1];
}, 180_000);

afterAll(async () => {
  await up?.stop();
  await rm(configDir, { recursive: true, force: true });
});

describe('argus up without MQTT_BROKER: one embedded broker for alert-dispatch and caption-runs', () => {
  it('alert-dispatch’s publish_mqtt and caption-runs’ relay use the broker the process names', async () => {
    const alerts = await subscribe(brokerUrl, 'argus/alerts/#');
    const stream = await readSse(`${up.roots['caption-runs']}/api/generate_captions_alerts/metadata-stream`);
    const camera = await mqtt.connectAsync(brokerUrl, { reconnectPeriod: 0 });
    try {
      const res = await fetch(`${up.roots['alert-dispatch']}/api/v1/actions/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ source_id: 'cam-1', alert_name: 'intrusion', tools: ['publish_mqtt'] }),
      });
      expect(res.status).toBe(200);
      const published = await alerts.waitFor((m) => m.topic === 'argus/alerts/cam-1');
      expect(published.payload).toMatchObject({ event: 'alert', source_id: 'cam-1', alert_name: 'intrusion' });
      // A caption published on the same broker reaches caption-runs' stream (its relay subscribed there).
      const caption = JSON.stringify({ metadata: { result: 'a van stops', frame_id: 1 } });
      let envelope: { runId?: string } | undefined;
      for (let count = 1; !envelope && count <= 50; count++) {
        await camera.publishAsync('live-video-captioning/gate', caption, { qos: 1 });
        envelope = (await stream.waitFor(count)).find((m: { runId?: string }) => m.runId === 'gate');
      }
      expect(envelope).toEqual({
        runId: 'gate',
        data: { result: 'a van stops', frame_id: 1 },
        received_at: expect.any(Number),
      });
    } finally {
      await camera.endAsync(true);
      await stream.close();
      await alerts.close();
    }
  }, 60_000);

  (unavailable ? it.skip : it)(
    'a caption run’s alert rule reaches this process’s alert-dispatch (no URL configured), which publishes it there',
    async () => {
      const camera: RtspServer = await startRtspServer();
      const alerts = await subscribe(brokerUrl, 'argus/alerts/#');
      const api = `${up.roots['caption-runs']}/api/generate_captions_alerts`;
      try {
        const response = await fetch(api, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            rtspUrl: camera.url,
            runName: 'front door',
            frameRate: 2,
            frameWidth: 160,
            frameHeight: 120,
            alerts: [{ name: 'door-watch', captionContains: 'offline caption' }],
          }),
        });
        expect(response.status).toBe(200);
        const alert = await alerts.waitFor((m) => m.topic === 'argus/alerts/front_door');
        expect(alert.payload).toMatchObject({ event: 'alert', source_id: 'front_door', alert_name: 'door-watch' });
      } finally {
        await fetch(`${api}/front_door`, { method: 'DELETE' });
        await alerts.close();
        await camera.stop();
      }
    },
    90_000,
  );
});
