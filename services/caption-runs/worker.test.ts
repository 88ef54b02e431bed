import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { ResourceStore } from '../../operator/ports/index.js';
import { startFakeChatCompletions, type FakeChatCompletions } from '../../test/support/fake-chat-completions.js';
import { ensureDefaultModels } from '../../test/support/models.js';
import { loadModels, type Detector, type LoadedModels } from '../lib/inference/index.js';
import { ChatCompletionsClient } from '../lib/llm/index.js';
import { bundledFfmpegPaths } from '../lib/media/index.js';
import { COCO_LABELS, labelsNamed, OFFLINE_CAPTION_LABEL } from '../lib/scene-description/index.js';
import { runResourceName } from './runs/run-ids.js';
import { CredentialSealer } from './runs/stream-credentials.js';
import { connectRelay } from './relay/mqtt-relay-source.js';
import { startJsonReceiver, type JsonReceiver } from './testing/json-receiver.js';
import { makeStreetVideo, STREET_SCENES } from './testing/photo-video.js';
import { statusReaches } from './testing/run-status.js';
import { readSse } from './testing/sse-reader.js';
import { rtspServerUnavailable, startRtspServer, type RtspServer } from './testing/rtsp-server.js';
import { sendJson, serveRuns, type ServedRuns } from './testing/serve-app.js';
import { startTestBroker, subscribe, type Subscriber, type TestBroker } from '../../test/support/mqtt-broker.js';
import { captionRunWorker, type CaptionWorkerDeps, type WorkerTiming } from './worker/caption-worker.js';
import { mqttCaptionPublisher, type MqttCaptionPublisher } from './worker/mqtt-publisher.js';

const OFFLINE = 'offline-detection-captioner';
const unavailable = rtspServerUnavailable();
if (unavailable) console.warn(`caption worker tests skipped: ${unavailable}`);
const describeWithRtsp = unavailable ? describe.skip : describe;

/** Fast pacing for tests: nothing here waits on these delays to synchronise; tests wait on messages and status. */
const TIMING: WorkerTiming = {
  ioTimeoutMs: 3000,
  idleTimeoutMs: 10_000,
  backoffMs: () => 100,
  startAttempts: 2,
  statusIntervalMs: 0,
};

let models: LoadedModels<'detector'>;
let broker: TestBroker;
let publisher: MqttCaptionPublisher;
let receiver: JsonReceiver;
let camera: RtspServer;
let runs: ServedRuns;
let vlm: FakeChatCompletions;
let subscriber: Subscriber;
/** Workers a test started: stopped after it whatever happened, so that one failure does not cascade. */
const started: Array<{ abort: AbortController; done: Promise<void> }> = [];

afterEach(async () => {
  for (const { abort, done } of started.splice(0)) {
    abort.abort();
    await done;
  }
});

beforeAll(async () => {
  if (unavailable) return;
  models = await loadModels({
    modelsDir: await ensureDefaultModels(),
    provider: 'cpu',
    threads: 1,
    isolation: 'main',
    roles: ['detector'] as const,
  });
  broker = await startTestBroker();
  publisher = mqttCaptionPublisher(broker.url, runsLogger(), 'caption-runs-worker-test');
  subscriber = await subscribe(broker.url, 'live-video-captioning/+');
  receiver = await startJsonReceiver();
  camera = await startRtspServer();
  vlm = await startFakeChatCompletions({ kind: 'content', content: 'A ball bounces across a grey screen.' });
  runs = await serveRuns({
    config: {
      vlm: { baseUrl: vlm.baseUrl, model: 'fake-vlm', timeoutMs: 5000, temperature: 0, imageMaxSide: 128 },
    },
  });
}, 120_000);

afterAll(async () => {
  if (unavailable) return;
  await subscriber?.close();
  await publisher?.close();
  await broker?.close();
  await receiver?.close();
  await camera?.stop();
  await vlm?.close();
  await runs?.close();
  await models?.release();
});

function runsLogger() {
  return { warn: () => undefined, info: () => undefined, error: () => undefined } as never;
}

function deps(store: ResourceStore): CaptionWorkerDeps {
  return {
    resources: store,
    logger: runs.logger,
    ffmpegPath: bundledFfmpegPaths().ffmpeg,
    detector: async (): Promise<Detector> => models.detector,
    vlm: (model) => new ChatCompletionsClient({ baseUrl: vlm.baseUrl, model, timeoutMs: 5000 }),
    vlmSettings: { temperature: 0, imageMaxSide: 128 },
    publisher,
    credentials: runs.credentials,
    captionQa: { url: `${receiver.url}/api/embeddings`, timeoutMs: 5000 },
    alerts: { url: `${receiver.url}/api/v1/alerts`, timeoutMs: 5000 },
    timing: TIMING,
  };
}

/** Starts a run through the API and its worker; returns the runId and how to stop it (as DELETE and the controller do). */
async function startRun(body: Record<string, unknown>, overrides: Partial<CaptionWorkerDeps> = {}) {
  const response = await sendJson(`${runs.api}/generate_captions_alerts`, body);
  expect(response.status).toBe(200);
  const { runId } = await response.json();
  const store = runs.plane.controlPlane.resources;
  const abort = new AbortController();
  const done = captionRunWorker({ ...deps(store), ...overrides })({
    namespace: 'default',
    name: runResourceName(runId),
    index: 0,
    completions: 1,
    signal: abort.signal,
  });
  started.push({ abort, done });
  return {
    runId: runId as string,
    store,
    done,
    stop: async () => {
      await fetch(`${runs.api}/generate_captions_alerts/${runId}`, { method: 'DELETE' });
      abort.abort();
      await done;
    },
    /** The process stops (no DELETE): the worker returns, the run stays as it was, to resume. */
    shutdown: async () => {
      abort.abort();
      await done;
    },
  };
}

/** Runs the worker again for an existing run (the process restarted), and the way to stop it. */
function resumeRun(runId: string) {
  const store = runs.plane.controlPlane.resources;
  const abort = new AbortController();
  const done = captionRunWorker(deps(store))({
    namespace: 'default',
    name: runResourceName(runId),
    index: 0,
    completions: 1,
    signal: abort.signal,
  });
  started.push({ abort, done });
  return {
    stop: async () => {
      await fetch(`${runs.api}/generate_captions_alerts/${runId}`, { method: 'DELETE' });
      abort.abort();
      await done;
    },
  };
}

describeWithRtsp('the caption worker on a real RTSP stream', () => {
  it('captions offline from detections: MQTT payload, caption-qa, an alert per matching chunk, then stops', async () => {
    receiver.bodies.length = 0;
    const run = await startRun({
      rtspUrl: camera.url,
      runName: 'yard',
      modelName: 'offline-detection-captioner',
      frameRate: 4,
      frameWidth: 160,
      frameHeight: 120,
      alerts: [
        { name: 'offline-caption', captionContains: 'offline caption' },
        { name: 'giraffe', label: 'giraffe' },
      ],
    });
    const first = await subscriber.waitFor((m) => m.topic === 'live-video-captioning/yard');
    const second = await subscriber.waitFor(
      (m) => m.topic === 'live-video-captioning/yard' && m.payload.metadata.frame_id > first.payload.metadata.frame_id,
    );
    const { metadata, blob } = second.payload;
    expect(metadata).toEqual({
      result: expect.stringMatching(new RegExp(`^${OFFLINE_CAPTION_LABEL.replace(/[()]/g, '\\$&')}`)),
      frame_id: expect.any(Number),
      timestamp: expect.any(Number),
      timestamp_seconds: expect.any(Number),
      resolution: { width: 160, height: 120 },
      img_format: 'jpeg',
      model: 'offline-detection-captioner',
      latency_ms: expect.any(Number),
      detections: expect.any(Array),
    });
    expect(Buffer.from(blob, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    // Each chunk went to caption-qa with its frame, and the caption rule raised one alert per chunk (no giraffe).
    await receiver.waitFor(4);
    const embeddings = receiver.bodies.filter((b) => b.path === '/api/embeddings');
    const alerts = receiver.bodies.filter((b) => b.path === '/api/v1/alerts');
    expect(embeddings[0].body).toEqual({
      image_data: expect.any(String),
      metadata: expect.objectContaining({ result: expect.any(String), run_id: 'yard', camera: 'yard' }),
    });
    expect(alerts[0].body).toMatchObject({
      alert_type: 'caption_rule',
      alert_name: 'offline-caption',
      source_id: 'yard',
      payloads: [{ kind: 'image', encoding: 'base64', mime_type: 'image/jpeg', data_base64: expect.any(String) }],
    });
    const running = await statusReaches(run.store, 'yard', (r) => (r.status?.captionsPublished ?? 0) >= 2);
    expect(running.status).toMatchObject({ phase: 'Running', mqttTopic: 'live-video-captioning/yard' });
    await run.stop();
    const stopped = await run.store.get('CaptionRun', 'default', runResourceName('yard'));
    expect(stopped?.status).toMatchObject({ phase: 'Stopped', finishedTime: expect.any(String) });
    const perChunk = receiver.bodies.filter((b) => b.path === '/api/v1/alerts').map((b) => b.body.metadata.frame_id);
    expect(new Set(perChunk).size).toBe(perChunk.length);
  }, 60_000);

  it('captions real video (photos of a street) over RTSP: the captions name what the detector found, people then a bus', async () => {
    const street = await startRtspServer('street', await makeStreetVideo());
    try {
      const run = await startRun({ rtspUrl: street.url, runName: 'street', frameRate: 2, modelName: OFFLINE });
      for (const { label } of STREET_SCENES) {
        const seen = await subscriber.waitFor(
          (m) =>
            m.topic === 'live-video-captioning/street' &&
            m.payload.metadata.detections.some((d: { label: string }) => d.label === label),
        );
        const { result, detections } = seen.payload.metadata;
        expect(result.startsWith(OFFLINE_CAPTION_LABEL)).toBe(true);
        // Every label the caption carries is named in its sentence ("two people", "a bus").
        const labels = new Set<string>(detections.map((d: { label: string }) => d.label));
        expect(labelsNamed(result, COCO_LABELS)).toEqual(expect.arrayContaining([...labels]));
        expect(labels).toContain(label);
      }
      await run.stop();
    } finally {
      await street.stop();
    }
  }, 90_000);

  it('start → two runs’ captions multiplexed on one SSE stream of the relay → stop', async () => {
    const source = connectRelay(broker.url, runs.relay, runs.logger, 'worker-test-relay');
    await source.subscribed;
    const stream = await readSse(`${runs.api}/generate_captions_alerts/metadata-stream`);
    // With a login (the test camera asks for none): the sealed password is opened by the worker and the stream read.
    const withLogin = camera.url.replace('rtsp://', 'rtsp://viewer:s3cret@');
    // The same camera under two pipelines: offline from detections, and the VLM.
    const offline = await startRun({ rtspUrl: withLogin, runName: 'relayed', frameRate: 4, modelName: OFFLINE });
    const described = await startRun({
      rtspUrl: camera.url,
      runName: 'described',
      frameRate: 4,
      modelName: 'fake-vlm',
    });
    try {
      const envelopeOf = async (runId: string) => {
        for (let count = 1; ; count++) {
          const found = (await stream.waitFor(count)).find((m) => m.runId === runId);
          if (found) return found;
        }
      };
      expect(await envelopeOf('relayed')).toEqual({
        runId: 'relayed',
        data: expect.objectContaining({ result: expect.stringContaining('Offline caption'), img_format: 'jpeg' }),
        received_at: expect.any(Number),
      });
      expect(await envelopeOf('described')).toEqual({
        runId: 'described',
        data: expect.objectContaining({ result: 'A ball bounces across a grey screen.', model: 'fake-vlm' }),
        received_at: expect.any(Number),
      });
    } finally {
      await offline.stop();
      await described.stop();
      await stream.close();
      await source.close();
    }
  }, 60_000);

  it('resumes a run after the process restarts: not stopped by the shutdown, counting on from its status', async () => {
    const run = await startRun({ rtspUrl: camera.url, runName: 'resumed', frameRate: 4, modelName: OFFLINE });
    await subscriber.waitFor((m) => m.topic === 'live-video-captioning/resumed');
    await run.shutdown();
    const kept = (await run.store.get('CaptionRun', 'default', runResourceName('resumed')))!;
    expect(kept.status?.phase).toBe('Running');
    const before = kept.status?.framesProcessed ?? 0;
    expect(before).toBeGreaterThan(0);
    const at = subscriber.messages.length;
    const resumed = resumeRun('resumed');
    const next = await subscriber.waitFor((m) => m.topic === 'live-video-captioning/resumed', at);
    expect(next.payload.metadata.frame_id).toBeGreaterThan(before);
    await resumed.stop();
  }, 60_000);

  it('outlives a camera reboot: Reconnecting while the stream is away, captions again once it is back', async () => {
    const reports = await subscribe(broker.url, 'live-video-captioning/reboot/metrics');
    const run = await startRun({ rtspUrl: camera.url, runName: 'reboot', frameRate: 4, modelName: OFFLINE });
    await subscriber.waitFor((m) => m.topic === 'live-video-captioning/reboot');
    await camera.stop();
    const away = await statusReaches(run.store, 'reboot', (r) => r.status?.phase === 'Reconnecting');
    expect(away.status?.lastError).toEqual(expect.any(String));
    const before = subscriber.messages.length;
    await camera.start();
    await subscriber.waitFor((m) => m.topic === 'live-video-captioning/reboot', before);
    const back = await statusReaches(run.store, 'reboot', (r) => r.status?.phase === 'Running');
    expect(back.status?.reconnects).toBeGreaterThanOrEqual(1);
    // The reopening was reported too (what the service's metrics count, wherever the worker runs).
    expect((await reports.waitFor((m) => m.payload.event === 'reconnect')).payload.reconnects).toBeGreaterThanOrEqual(
      1,
    );
    await reports.close();
    await run.stop();
  }, 60_000);

  it('captions with the VLM: the prompt and the chunk’s frames as images, maxNewTokens as max_tokens', async () => {
    vlm.requests.length = 0;
    const run = await startRun({
      rtspUrl: camera.url,
      runName: 'vlm',
      modelName: 'fake-vlm',
      prompt: 'What moves?',
      maxNewTokens: 12,
      chunkSize: 2,
      frameRate: 4,
    });
    const message = await subscriber.waitFor((m) => m.topic === 'live-video-captioning/vlm');
    expect(message.payload.metadata).toMatchObject({
      result: 'A ball bounces across a grey screen.',
      model: 'fake-vlm',
    });
    const request = vlm.requests[0].body;
    expect(request).toMatchObject({ model: 'fake-vlm', max_tokens: 12 });
    const content = request.messages[0].content;
    expect(content[0]).toEqual({ type: 'text', text: 'What moves?' });
    expect(content.slice(1)).toEqual([
      { type: 'image_url', image_url: { url: expect.stringMatching(/^data:image\/jpeg;base64,/) } },
      { type: 'image_url', image_url: { url: expect.stringMatching(/^data:image\/jpeg;base64,/) } },
    ]);
    await run.stop();
  }, 60_000);

  it('fails a run whose stream never gives a frame (a bad URL), naming why', async () => {
    const run = await startRun({
      rtspUrl: 'rtsp://cam:s3cret@127.0.0.1:9/nothing-here',
      runName: 'bad',
      modelName: OFFLINE,
    });
    await run.done;
    const failed = await run.store.get('CaptionRun', 'default', runResourceName('bad'));
    expect(failed?.status).toMatchObject({ phase: 'Failed', finishedTime: expect.any(String) });
    expect(failed?.status?.message).toMatch(/could not be read after 2 attempts/);
    // The camera's password reaches neither status nor the API.
    expect(JSON.stringify(failed?.status)).not.toContain('s3cret');
    expect((await (await fetch(`${runs.api}/generate_captions_alerts/bad`)).json()).status).toBe('failed');
  }, 60_000);

  it('fails a run whose sealed password this worker cannot open (another key), saying so and showing no password', async () => {
    const withLogin = camera.url.replace('rtsp://', 'rtsp://viewer:s3cret@');
    const run = await startRun(
      { rtspUrl: withLogin, runName: 'other-key', modelName: OFFLINE },
      { credentials: new CredentialSealer('another key of at least thirty-two characters') },
    );
    await run.done;
    const failed = await run.store.get('CaptionRun', 'default', runResourceName('other-key'));
    expect(failed?.status).toMatchObject({
      phase: 'Failed',
      message: expect.stringContaining('CAPTION_RUNS_CREDENTIALS_KEY'),
    });
    expect(JSON.stringify(failed)).not.toContain('s3cret');
  }, 60_000);

  it('counts caption-qa failures in its reports without stopping the captions; reports each caption and the end', async () => {
    receiver.status = 503;
    const reports = await subscribe(broker.url, 'live-video-captioning/qa-down/metrics');
    try {
      const run = await startRun({ rtspUrl: camera.url, runName: 'qa-down', frameRate: 4, modelName: OFFLINE });
      const first = await subscriber.waitFor((m) => m.topic === 'live-video-captioning/qa-down');
      await subscriber.waitFor(
        (m) =>
          m.topic === 'live-video-captioning/qa-down' && m.payload.metadata.frame_id > first.payload.metadata.frame_id,
      );
      const failing = await reports.waitFor((m) => m.payload.event === 'caption' && m.payload.captions >= 2);
      expect(failing.payload).toEqual({
        event: 'caption',
        session: expect.stringMatching(/^[0-9a-f]{16}$/),
        frames: expect.any(Number),
        captions: 2,
        dropped_frames: expect.any(Number),
        reconnects: 0,
        latency_ms: expect.any(Number),
        caption_qa: { posted: 0, failed: 2 },
        alerts: { raised: 0, failed: 0 },
        timestamp: expect.any(Number),
      });
      await run.stop();
      const ended = await reports.waitFor((m) => m.payload.event === 'ended');
      expect(ended.payload.session).toBe(failing.payload.session);
    } finally {
      receiver.status = 200;
      await reports.close();
    }
  }, 60_000);
});
