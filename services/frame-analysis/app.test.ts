/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import { mkdir, mkdtemp, readFile, writeFile, copyFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { fixtureImage } from '../../test/support/fixtures.js';
import { captureLogs, logsWritten } from '../../test/support/logs.js';
import { multiPoseModel } from '../lib/inference/import/index.js';
import type { LoadedMultiPoseEstimator } from '../lib/inference/index.js';
import { MAX_FRAME_BYTES } from './config.js';
import { parsePatternLibrary } from './patterns/pattern-library.js';
import { startFakeChatCompletions, type FakeChatCompletions } from '../../test/support/fake-chat-completions.js';
import { verdictAnswer } from './testing/verdict-answer.js';
import { fallSequence, walkSequence } from './testing/photo-sequences.js';
import { analysisForm, multiPoseModelsDir, realEstimator, serveApp, type ServedApp } from './testing/serve-app.js';
import { VlmConfirmer } from './vlm/vlm-confirmer.js';
import { createLogger } from '../lib/log/index.js';

let estimator: LoadedMultiPoseEstimator;
let served: ServedApp;
let fall: Buffer[];
let walk: Buffer[];
let coffee: Buffer;

const post = (api: string, form: FormData) => fetch(`${api}/analyze/batch`, { method: 'POST', body: form });

beforeAll(async () => {
  estimator = await realEstimator();
  served = await serveApp({
    estimator,
    config: {
      minPersonScore: 0.2,
      vlmEnabledByDefault: false,
      limits: {
        maxFrames: 4,
        maxFrameBytes: MAX_FRAME_BYTES,
        maxFramePixels: 1_000_000,
        maxBodyBytes: 8 * 1024 * 1024,
      },
    },
  });
  [fall, walk, coffee] = await Promise.all([fallSequence(), walkSequence(), readFile(fixtureImage('coffee.png'))]);
}, 120_000);

afterAll(async () => {
  await served.close();
  await estimator.release();
});

describe('POST /api/v1/analyze/batch with the real pose model', () => {
  it('detects a fall in a real photo sequence and names the pattern and why', async () => {
    const response = await post(served.api, analysisForm({ entity_id: 'cam1-p7', pattern_id: 'fall_detection' }, fall));
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(Object.keys(body)).toEqual([
      'entity_id',
      'status',
      'pose_detected',
      'frames_submitted',
      'confidence',
      'message',
      'vlm_confirmed',
      'vlm_reasoning',
    ]);
    expect(body).toMatchObject({
      entity_id: 'cam1-p7',
      status: 'suspicious',
      pose_detected: true,
      frames_submitted: 3,
      vlm_confirmed: null,
      vlm_reasoning: null,
    });
    expect(body.confidence).toBeGreaterThanOrEqual(0.6);
    expect(body.message).toMatch(/^Pattern "fall_detection" detected \(confidence .* >= threshold 0\.6\): torso angle/);
  });

  it('answers no_match for the same person walking upright', async () => {
    const response = await post(served.api, analysisForm({ entity_id: 'e', pattern_id: 'fall_detection' }, walk));
    const body = await response.json();
    expect(response.status).toBe(200);
    expect(body).toMatchObject({ status: 'no_match', pose_detected: true, confidence: 0, frames_submitted: 3 });
    expect(body.message).toMatch(/^Pattern "fall_detection" not detected/);
  });

  it('runs every enabled pattern when none is named and reports the most confident', async () => {
    const body = await (await post(served.api, analysisForm({ entity_id: 'e' }, fall))).json();
    expect(body.status).toBe('suspicious');
    expect(body.message).toMatch(/"fall_detection"/);
  });

  it('answers pose_not_detected when no frame shows a person', async () => {
    const body = await (await post(served.api, analysisForm({ entity_id: 'e' }, [coffee, coffee]))).json();
    expect(body).toEqual({
      entity_id: 'e',
      status: 'pose_not_detected',
      pose_detected: false,
      frames_submitted: 2,
      confidence: null,
      message: 'No pose detected in any of the 2 frames',
      vlm_confirmed: null,
      vlm_reasoning: null,
    });
  });

  it('analyses the good frames of a mix, counting only them', async () => {
    const response = await post(served.api, analysisForm({ entity_id: 'e' }, [Buffer.from('not an image'), ...walk]));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ frames_submitted: 3, pose_detected: true });
  });

  it('echoes request_id in the X-Request-Id header, and generates one otherwise', async () => {
    const named = await post(served.api, analysisForm({ entity_id: 'e', request_id: 'req-42' }, [coffee]));
    expect(named.headers.get('x-request-id')).toBe('req-42');
    const generated = await post(served.api, analysisForm({ entity_id: 'e' }, [coffee]));
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('metrics', () => {
  it('counts answers by status and pattern, and frames by outcome, on /metrics (the requests above)', async () => {
    const text = await (await fetch(`${served.url}/metrics`)).text();
    expect(text).toMatch(
      /frame_analysis_results_total\{status="suspicious",pattern="fall_detection",service="[^"]+"\} 2/,
    );
    expect(text).toMatch(/frame_analysis_results_total\{status="pose_not_detected",pattern="none",service="[^"]+"\} 3/);
    expect(text).toMatch(/frame_analysis_frames_total\{outcome="rejected",service="[^"]+"\} 1/);
  });
});

describe('error bodies through the real multipart endpoint', () => {
  it('400 NO_FRAMES_PROVIDED without frames', async () => {
    const response = await post(served.api, analysisForm({ entity_id: 'e' }, []));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      detail: { error_code: 'NO_FRAMES_PROVIDED', message: 'No frames in the request (form field "frames")' },
    });
  });

  it('422 INVALID_FRAMES listing [index, reason] for every frame when none is valid', async () => {
    const png = await sharp(fixtureImage('coffee.png')).png().toBuffer();
    const truncated = (await sharp(fixtureImage('rocket.jpg')).jpeg().toBuffer()).subarray(0, 4000);
    const huge = await sharp({ create: { width: 1200, height: 1000, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    const oversized = Buffer.concat([png, Buffer.alloc(MAX_FRAME_BYTES)]);
    const response = await post(
      served.api,
      analysisForm({ entity_id: 'e' }, [Buffer.from('GIF89a not really'), oversized, truncated, huge]),
    );
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      detail: {
        error_code: 'INVALID_FRAMES',
        message: 'No valid frame could be decoded',
        invalid_frames: [
          [0, 'not a valid image format (JPEG, PNG or WebP expected)'],
          [1, 'frame exceeds the 5 MB limit'],
          [2, 'image could not be decoded'],
          [3, 'image exceeds 1000000 pixels'],
        ],
      },
    });
  });

  it('422 VALIDATION_ERROR without entity_id, and for timestamps that do not fit the frames', async () => {
    const missing = await post(served.api, analysisForm({}, [coffee]));
    expect(missing.status).toBe(422);
    expect(await missing.json()).toEqual({
      detail: { error_code: 'VALIDATION_ERROR', message: '"entity_id" is required' },
    });
    const times = await post(served.api, analysisForm({ entity_id: 'e', timestamps_ms: '0,40' }, [coffee]));
    expect(times.status).toBe(422);
    expect((await times.json()).detail.message).toBe('timestamps_ms has 2 values for 1 submitted frames');
  });

  it('422 UNKNOWN_PATTERN naming the known patterns', async () => {
    const response = await post(served.api, analysisForm({ entity_id: 'e', pattern_id: 'teleport' }, [coffee]));
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      detail: {
        error_code: 'UNKNOWN_PATTERN',
        message:
          'Unknown pattern_id "teleport"; known patterns: shelf_to_waist, quick_grab, fall_detection, loitering, raised_arms',
      },
    });
  });

  it('415 for a body that is not multipart/form-data', async () => {
    const response = await fetch(`${served.api}/analyze/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ entity_id: 'e' }),
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({
      detail: { error_code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body must be multipart/form-data' },
    });
  });

  it('413 beyond the frame cap and beyond the body limit', async () => {
    const many = await post(served.api, analysisForm({ entity_id: 'e' }, Array(5).fill(coffee)));
    expect(many.status).toBe(413);
    expect(await many.json()).toEqual({
      detail: { error_code: 'TOO_MANY_FRAMES', message: 'At most 4 frames per request' },
    });
    const threeMegabytes = Buffer.alloc(3 * 1024 * 1024);
    const big = await post(
      served.api,
      analysisForm({ entity_id: 'e' }, [threeMegabytes, threeMegabytes, threeMegabytes]),
    );
    expect(big.status).toBe(413);
    expect((await big.json()).detail.error_code).toBe('REQUEST_TOO_LARGE');
  });

  it('413 REQUEST_TOO_LARGE for a chunked body that grows past the limit while it is read', async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${served.api}/analyze/batch`, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=x', 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      req.write('--x\r\nContent-Disposition: form-data; name="frames"; filename="a.jpg"\r\n\r\n');
      // 12 chunks of 1 MiB (the limit is 8 MiB); writing stops once the server has answered.
      let sent = 0;
      const writeMore = () => {
        while (sent < 12 && !req.destroyed) {
          sent += 1;
          if (!req.write(Buffer.alloc(1024 * 1024))) return req.once('drain', writeMore);
        }
        req.end();
      };
      writeMore();
    });
    expect(status).toBe(413);
    expect(JSON.parse(body).detail.error_code).toBe('REQUEST_TOO_LARGE');
  });

  it('survives a client that leaves in the middle of a frame, and answers the next request', async () => {
    await new Promise<void>((resolve) => {
      const req = http.request(`${served.api}/analyze/batch`, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=x', 'transfer-encoding': 'chunked' },
      });
      req.on('error', () => resolve());
      req.write('--x\r\nContent-Disposition: form-data; name="frames"; filename="a.jpg"\r\n\r\n');
      req.write(coffee.subarray(0, 1000), () => {
        req.destroy();
        resolve();
      });
    });
    const next = await post(served.api, analysisForm({ entity_id: 'e' }, [coffee]));
    expect(next.status).toBe(200);
  });

  it('answers unknown paths in the same error shape', async () => {
    const response = await fetch(`${served.api}/analyze/nothing`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ detail: { error_code: 'NOT_FOUND', message: 'Not Found' } });
  });
});

describe('500 INTERNAL_ERROR', () => {
  it('starts with the analysis-failed prefix and leaks no internals when the pose model cannot run', async () => {
    const modelsDir = await multiPoseModelsDir();
    const broken = await mkdtemp(path.join(os.tmpdir(), 'broken-pose-'));
    await mkdir(broken, { recursive: true });
    await copyFile(path.join(modelsDir, multiPoseModel.name, 'manifest.json'), path.join(broken, 'manifest.json'));
    await writeFile(path.join(broken, 'model.onnx'), 'not an onnx graph');
    const brokenEstimator = await realEstimator(broken);
    const logs = captureLogs();
    const app = await serveApp({ estimator: brokenEstimator, logger: logs.logger });
    try {
      const response = await post(app.api, analysisForm({ entity_id: 'e' }, [coffee]));
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({
        detail: { error_code: 'INTERNAL_ERROR', message: 'Analysis failed: pose estimation failed' },
      });
      expect(text).not.toMatch(/onnx|at \w+ \(|\.ts:/i);
      // The cause is logged with the request id instead: on stderr, stack included.
      await logsWritten();
      expect(logs.lines('err')).toContainEqual(
        expect.objectContaining({
          message: 'analysis failed',
          requestId: response.headers.get('x-request-id'),
          step: 'pose estimation failed',
          stack: expect.stringContaining('Protobuf parsing failed'),
        }),
      );
    } finally {
      await app.close();
    }
  });
});

describe('VLM confirmation through the endpoint', () => {
  // A library whose one pattern matches any upright person, so the VLM path is reached on real photos.
  const upright = parsePatternLibrary(
    {
      version: 1,
      patterns: [
        {
          id: 'upright',
          description: 'The person stands upright.',
          threshold: 0.5,
          min_keypoint_score: 0.2,
          rule: { kind: 'sustained', signal: 'torso_angle', zone: { max: 30 }, min_frames: 2 },
        },
      ],
    },
    'test',
  );
  let vlm: FakeChatCompletions;
  let app: ServedApp;
  let now = 0;

  /** The app with a VLM client; its time-out never fires on a loaded machine unless the test makes it short. */
  const serveWithVlm = (timeoutMs: number) =>
    serveApp({
      estimator,
      patterns: upright,
      vlm: new VlmConfirmer(
        {
          baseUrl: vlm.baseUrl,
          model: 'fake-vlm',
          maxTokens: 200,
          temperature: 0,
          timeoutMs,
          imageMaxSide: 256,
          breakerFailures: 3,
          breakerOpenMs: 30_000,
        },
        createLogger({ service: 'test', level: 'error', json: true }),
        () => now,
      ),
      config: {
        minPersonScore: 0.2,
        vlmEnabledByDefault: true,
        limits: { maxFrames: 8, maxFrameBytes: MAX_FRAME_BYTES, maxFramePixels: 40_000_000, maxBodyBytes: 48e6 },
      },
    });

  beforeAll(async () => {
    vlm = await startFakeChatCompletions(verdictAnswer({ confirmed: true, confidence: 0.8, reasoning: 'ok' }));
    app = await serveWithVlm(60_000);
  });
  afterAll(async () => {
    await app.close();
    await vlm.close();
  });

  const analyse = async (fields: Record<string, string> = {}, on: ServedApp = app) =>
    (await post(on.api, analysisForm({ entity_id: 'e', ...fields }, walk))).json();

  it('confirmed: confidence is the mean of the pose and VLM confidences', async () => {
    vlm.behaviour = verdictAnswer({ confirmed: true, confidence: 0.5, reasoning: 'a person standing' });
    const body = await analyse();
    expect(body).toMatchObject({ status: 'suspicious', vlm_confirmed: true, vlm_reasoning: 'a person standing' });
    expect(body.confidence).toBe(0.75); // pose 1.0 (upright in 3 of 3 frames), VLM 0.5
    expect(vlm.requests.at(-1)!.body.messages[1].content.filter((p: any) => p.type === 'image_url')).toHaveLength(3);
  });

  it('rejected: pose confidence × 0.5 and no_match', async () => {
    vlm.behaviour = verdictAnswer({ confirmed: false, confidence: 0.9, reasoning: 'nobody there' });
    expect(await analyse()).toMatchObject({
      status: 'no_match',
      confidence: 0.5,
      vlm_confirmed: false,
      vlm_reasoning: 'nobody there',
    });
  });

  it('error or time-out: the pose result stands, vlm_confirmed null and the reason', async () => {
    vlm.behaviour = { kind: 'status', status: 502 };
    expect(await analyse()).toMatchObject({
      status: 'suspicious',
      confidence: 1,
      vlm_confirmed: null,
      vlm_reasoning: 'VLM unavailable: the VLM answered HTTP 502',
    });
    vlm.behaviour = { kind: 'hang' };
    const impatient = await serveWithVlm(200);
    try {
      expect(await analyse({}, impatient)).toMatchObject({
        status: 'suspicious',
        vlm_confirmed: null,
        vlm_reasoning: 'VLM unavailable: no answer within 200 ms',
      });
    } finally {
      await impatient.close();
    }
  });

  it('open circuit after 3 consecutive failures: no call for 30 s, the pose result stands', async () => {
    vlm.behaviour = { kind: 'status', status: 500 };
    await analyse(); // second consecutive failure of this client (the 502 came before)
    await analyse(); // third: the circuit opens
    const before = vlm.requests.length;
    const body = await analyse();
    expect(vlm.requests).toHaveLength(before);
    expect(body).toMatchObject({ status: 'suspicious', vlm_confirmed: null });
    expect(body.vlm_reasoning).toMatch(/^VLM skipped: circuit open/);
    now += 30_000;
    vlm.behaviour = verdictAnswer({ confirmed: true, confidence: 1, reasoning: 'back' });
    expect(await analyse()).toMatchObject({ vlm_confirmed: true, vlm_reasoning: 'back' });
  });

  it('vlm_enabled=false overrides the configured default: no call, vlm fields null', async () => {
    const before = vlm.requests.length;
    expect(await analyse({ vlm_enabled: 'false' })).toMatchObject({
      status: 'suspicious',
      vlm_confirmed: null,
      vlm_reasoning: null,
    });
    expect(vlm.requests).toHaveLength(before);
  });
});
