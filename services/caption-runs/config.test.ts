import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../lib/config/index.js';
import { loadCaptionRunsConfig } from './config.js';
import { workerTiming } from './worker/worker-runtime.js';

describe('loadCaptionRunsConfig', () => {
  it('has working defaults: port 4173, no VLM (offline captions), any RTSP host, no media root', () => {
    const config = loadCaptionRunsConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 4173,
      vlm: undefined,
      rtspAllow: undefined,
      mediaRoot: undefined,
      defaultDetector: 'centernet-mobilenetv3-coco',
      mqttBroker: undefined,
      captionQaUrl: undefined,
      alertsUrl: undefined,
      postTimeoutMs: 10_000,
      stream: {
        ioTimeoutMs: 10_000,
        idleTimeoutMs: 15_000,
        reconnectMaxMs: 30_000,
        startAttempts: 5,
        statusIntervalMs: 5000,
      },
    });
  });

  it('reads the outputs: an external broker, caption-qa and alert-dispatch roots (trailing / dropped)', () => {
    const config = loadCaptionRunsConfig({
      MQTT_BROKER: 'mqtt://mosquitto:1883',
      CAPTION_RUNS_CAPTION_QA_URL: 'http://caption-qa:4172/api/',
      CAPTION_RUNS_ALERTS_URL: 'http://alert-dispatch:8000/api/v1',
      CAPTION_RUNS_STALL_SECONDS: '2.5',
    });
    expect(config).toMatchObject({
      mqttBroker: 'mqtt://mosquitto:1883',
      captionQaUrl: 'http://caption-qa:4172/api',
      alertsUrl: 'http://alert-dispatch:8000/api/v1',
      stream: { idleTimeoutMs: 2500 },
    });
  });

  it('shares the VLM settings with frame-analysis and reads its own under CAPTION_RUNS_*', () => {
    const config = loadCaptionRunsConfig({
      VLM_BASE_URL: 'http://vllm:8000/v1',
      VLM_MODEL: 'qwen2-vl',
      VLM_API_KEY: 'k',
      CAPTION_RUNS_PORT: '0',
      CAPTION_RUNS_RTSP_ALLOW: '10.0.0.0/8, cam.lan',
      CAPTION_RUNS_MEDIA_ROOT: 'media',
      ARGUS_MODEL_DETECTOR: 'yolov8n',
    });
    expect(config.vlm).toEqual({
      baseUrl: 'http://vllm:8000/v1',
      model: 'qwen2-vl',
      apiKey: 'k',
      timeoutMs: 20_000,
      temperature: 0,
      imageMaxSide: 512,
    });
    expect(config.port).toBe(0);
    expect(config.rtspAllow?.hasAddress('10.2.3.4')).toBe(true);
    expect(config.rtspAllow?.hasHost('cam.lan')).toBe(true);
    expect(config.mediaRoot).toBe(path.resolve('media'));
    expect(config.defaultDetector).toBe('yolov8n');
  });

  it('lists every problem, unknown names under its prefixes included', () => {
    let error: unknown;
    try {
      loadCaptionRunsConfig({
        CAPTION_RUNS_PORT: 'x',
        CAPTION_RUNS_RTSP_ALLOW: '10.0.0.0/99',
        CAPTION_RUNS_PROT: '1',
        VLM_BASE_URL: 'ftp://vlm',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['CAPTION_RUNS_PORT', 'CAPTION_RUNS_RTSP_ALLOW', 'CAPTION_RUNS_PROT', 'VLM_BASE_URL']) {
      expect(problems).toContain(name);
    }
  });
});

describe('workerTiming', () => {
  it('reconnects after 1 s, doubling up to CAPTION_RUNS_RECONNECT_MAX_SECONDS', () => {
    const timing = workerTiming(loadCaptionRunsConfig({ CAPTION_RUNS_RECONNECT_MAX_SECONDS: '20' }).stream);
    expect([1, 2, 3, 4, 5, 6, 50].map((attempt) => timing.backoffMs(attempt))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 20_000, 20_000,
    ]);
  });
});
