import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import type { ResourceStore } from '../../operator/ports/index.js';
import { ConfigError } from '../lib/config/index.js';
import { createLogger } from '../lib/log/index.js';
import { loadCameraRulesConfig } from './config.js';
import { openRuntime } from './runtime/runtime.js';

describe('loadCameraRulesConfig', () => {
  it('defaults to port 8001 and the recordings directory under the data dir', () => {
    const config = loadCameraRulesConfig({ ARGUS_DATA_DIR: '/data' });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8001,
      dataDir: path.resolve('/data/camera-rules'),
      recorder: { kind: 'directory', dir: path.resolve('/data/camera-rules/recordings') },
      dataprepUrl: 'http://127.0.0.1:6007/v1/dataprep',
      alertDispatchUrl: 'http://127.0.0.1:8000/api/v1',
    });
  });

  it('chooses Frigate when its URL is set, with the broker and topic prefix', () => {
    const config = loadCameraRulesConfig({
      CAMERA_RULES_FRIGATE_URL: 'http://frigate:5000/',
      CAMERA_RULES_FRIGATE_TOPIC_PREFIX: 'nvr',
      MQTT_BROKER: 'mqtt://broker:1883',
    });
    expect(config.recorder).toEqual({
      kind: 'frigate',
      url: 'http://frigate:5000',
      token: undefined,
      credentials: undefined,
      timeoutMs: 5000,
      topicPrefix: 'nvr',
      mqttBroker: 'mqtt://broker:1883',
    });
  });

  it("sends a Frigate camera's new recordings to search unless CAMERA_RULES_INDEX_RECORDINGS is false", async () => {
    const frigate = { CAMERA_RULES_FRIGATE_URL: 'http://frigate:5000' };
    expect(loadCameraRulesConfig(frigate).indexRecordings).toBe(true);
    expect(loadCameraRulesConfig({ ...frigate, CAMERA_RULES_INDEX_RECORDINGS: 'false' }).indexRecordings).toBe(false);
    expect(() => loadCameraRulesConfig({ CAMERA_RULES_INDEX_RECORDINGS: 'sometimes' })).toThrow(ConfigError);
    // The watchers' runtime follows recordings only then (and never with the directory recorder, which has none).
    const logger = createLogger({ service: 'camera-rules-test', level: 'error', json: true });
    const plane = { resources: {} as ResourceStore, namespace: 'default', registerWorker: () => undefined };
    const runtimes = [frigate, { ...frigate, CAMERA_RULES_INDEX_RECORDINGS: 'false' }, {}].map((env) =>
      openRuntime(loadCameraRulesConfig({ ARGUS_DATA_DIR: '/nonexistent', ...env }), plane, logger),
    );
    expect(runtimes.map((r) => r.recordings !== undefined)).toEqual([true, false, false]);
    for (const runtime of runtimes) await runtime.close();
  });

  it('reads the actions settings and the VLM shared with frame-analysis; offline summaries without one', () => {
    expect(loadCameraRulesConfig({})).toMatchObject({
      search: { bucket: 'camera-events', frameInterval: 15, timeoutMs: 300_000 },
      alertTools: ['log_alert', 'capture_snapshot'],
      vlm: undefined,
      policies: { media: { attempts: 8 }, action: { attempts: 4 } },
    });
    const config = loadCameraRulesConfig({
      VLM_BASE_URL: 'http://vllm:8000/v1',
      VLM_MODEL: 'qwen2-vl',
      VLM_API_KEY: 'k',
      CAMERA_RULES_ALERT_TOOLS: 'log_alert',
      CAMERA_RULES_SEARCH_BUCKET: 'porch-events',
      CAMERA_RULES_ACTION_ATTEMPTS: '2',
    });
    expect(config).toMatchObject({
      vlm: { baseUrl: 'http://vllm:8000/v1', model: 'qwen2-vl', apiKey: 'k', maxTokens: 300, temperature: 0 },
      alertTools: ['log_alert'],
      search: { bucket: 'porch-events' },
      policies: { action: { attempts: 2 } },
    });
  });

  it('refuses unknown names under its prefixes, bad values and both recorders at once, listing every problem', () => {
    let error: unknown;
    try {
      loadCameraRulesConfig({
        CAMERA_RULES_PORTT: '1',
        CAMERA_RULES_PORT: 'x',
        CAMERA_RULES_FRIGATE_URL: 'http://frigate:5000',
        CAMERA_RULES_RECORDINGS_DIR: '/rec',
        CAMERA_RULES_FRIGATE_TOPIC_PREFIX: 'a/#',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/CAMERA_RULES_PORTT is not a known setting/);
    expect(problems).toMatch(/CAMERA_RULES_PORT/);
    expect(problems).toMatch(/CAMERA_RULES_FRIGATE_URL.*CAMERA_RULES_RECORDINGS_DIR|conflict/);
    expect(problems).toMatch(/CAMERA_RULES_FRIGATE_TOPIC_PREFIX/);
  });

  it('takes a Frigate user and password together, never with a token', () => {
    const config = loadCameraRulesConfig({
      CAMERA_RULES_FRIGATE_URL: 'https://frigate:8971',
      CAMERA_RULES_FRIGATE_USER: 'argus',
      CAMERA_RULES_FRIGATE_PASSWORD: 'correct horse',
    });
    expect(config.recorder).toMatchObject({ credentials: { user: 'argus', password: 'correct horse' } });
    expect(() =>
      loadCameraRulesConfig({ CAMERA_RULES_FRIGATE_URL: 'http://f:5000', CAMERA_RULES_FRIGATE_USER: 'argus' }),
    ).toThrow(/CAMERA_RULES_FRIGATE_PASSWORD/);
    expect(() =>
      loadCameraRulesConfig({
        CAMERA_RULES_FRIGATE_URL: 'http://f:5000',
        CAMERA_RULES_FRIGATE_USER: 'argus',
        CAMERA_RULES_FRIGATE_PASSWORD: 'pw',
        CAMERA_RULES_FRIGATE_TOKEN: 't',
      }),
    ).toThrow(/CAMERA_RULES_FRIGATE_TOKEN/);
  });
});
