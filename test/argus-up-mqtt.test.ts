import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mqtt from 'mqtt';
import { multiPoseModelsDir } from '../services/frame-analysis/testing/serve-app.js';
import { readSse } from '../services/caption-runs/testing/sse-reader.js';
import { startArgusUp, type RunningArgusUp } from './support/argus-process.js';
import { subscribe } from './support/mqtt-broker.js';

let up: RunningArgusUp;
/** The broker `argus up` embeds (MQTT_BROKER unset). */
let brokerUrl: string;

beforeAll(async () => {
  up = await startArgusUp(['alert-dispatch', 'caption-runs'], await multiPoseModelsDir());
  const ready = await up.process.waitForRecord((r) => r.message === 'argus is up');
  brokerUrl = /^embedded \((mqtt:\/\/127\.0\.0\.1:\d+)\)$/.exec(String(ready.mqtt))![1];
}, 180_000);

afterAll(() => up?.stop());

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
});
