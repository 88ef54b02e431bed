/**
 * Caption runs (`npm run bench caption-runs`): the service in this process with its real wiring
 * (`startCaptionRunsFrom` over the embedded control plane with its controllers, the caption worker in-process, an
 * Aedes broker on loopback as `argus up` embeds it), four GStreamer RTSP cameras on loopback (a live 1280×720 test
 * pattern at 5 frames/s each, H.264):
 *
 * 1. Caption latency: 4 concurrent runs at 1 frame/s on the detection pipeline with the offline captioner (the
 *    default without a VLM); p50/p99 of each caption's `latency_ms` (frame read → MQTT publish, as the worker measures
 *    and publishes it), against the bare detector on one 720p frame of the same stream (the same model and session
 *    hosting as the worker's: a worker thread, ARGUS_ORT_THREADS intra-op threads), measured in the same run before
 *    the runs start, and again while they caption — what the whole chain costs beyond detection. Measured in the
 *    runs' steady state: from their 6th frame on (a stream just opened hands over its first frames in a burst).
 * 2. The relay: 100 SSE subscribers on the metadata stream while the runs publish; p99 of publish → SSE receipt
 *    (receipt time − the caption's `timestamp` + `latency_ms`, i.e. its publish time, ms resolution) against a bare
 *    MQTT subscriber's publish → receipt in the same run. Target p99 < 50 ms.
 *
 * Subscribers run in this process (a pessimistic set-up: they share its event loop with the service and the
 * workers). Loopback only, bounded durations.
 */
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import mqtt from 'mqtt';
import { ensureDefaultModels } from '../test/support/models.js';
import { startTestBroker, subscribe } from '../test/support/mqtt-broker.js';
import { loadControllerSettings } from '../operator/config.js';
import { openEmbeddedControlPlane } from '../operator/embedded-control-plane.js';
import { DEFAULT_MODEL_NAMES, loadModels } from '../services/lib/inference/index.js';
import { createLogger } from '../services/lib/log/index.js';
import { bundledFfmpegPaths, decodeImage } from '../services/lib/media/index.js';
import { loadCaptionRunsConfig } from '../services/caption-runs/config.js';
import { startCaptionRunsFrom } from '../services/caption-runs/main.js';
import {
  rtspServerUnavailable,
  startRtspServer,
  type RtspServer,
} from '../services/caption-runs/testing/rtsp-server.js';
import { latencyStats } from './latency-stats.js';

const RUNS = 4;
const WIDTH = 1280;
const HEIGHT = 720;
const CAMERA_FPS = 5;
const SUBSCRIBERS = 100;
/** How long the runs caption (after each has published its first caption). */
const MEASURE_MS = 40_000;
/** Bare detector calls on one frame (after two warm-up calls). */
const DETECTOR_CALLS = 20;
const THREADS = '2';
/** Frames each run has captioned before the measurement starts (past the start-up burst). */
const WARMUP_FRAMES = 6;

/** One JPEG frame of `url` at its own size, read by the bundled ffmpeg as the worker reads it (RTSP over TCP). */
function grabFrame(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const ffmpeg = spawn(
      bundledFfmpegPaths().ffmpeg,
      [
        '-loglevel',
        'error',
        '-rtsp_transport',
        'tcp',
        '-i',
        url,
        '-frames:v',
        '1',
        '-f',
        'image2pipe',
        '-c:v',
        'mjpeg',
        '-',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const chunks: Buffer[] = [];
    ffmpeg.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    ffmpeg.once('error', reject);
    ffmpeg.once('close', (code) =>
      code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`ffmpeg exited ${code}`)),
    );
  });
}

/** The bare detector (a session of its own, hosted as the worker's) on one decoded frame: `detect` alone, timed. */
async function bareDetector(modelsDir: string, jpeg: Buffer) {
  const models = await loadModels({
    modelsDir,
    provider: 'cpu',
    threads: Number(THREADS),
    isolation: 'worker',
    roles: ['detector'] as const,
  });
  const image = await decodeImage(jpeg);
  const time = async () => {
    const started = performance.now();
    await models.detector.detect(image, 0.5);
    return performance.now() - started;
  };
  return { time, release: () => models.release() };
}

/** An SSE reader of the metadata stream that records, per caption, receipt time − publish time. */
function relayReader(url: string, delays: number[]): { close(): void } {
  const request = http.get(url, (response) => {
    let pending = '';
    response.setEncoding('utf8').on('data', (chunk: string) => {
      const now = Date.now();
      pending += chunk;
      const events = pending.split('\n\n');
      pending = events.pop()!;
      for (const event of events) {
        if (!event.startsWith('data: ')) continue;
        const envelope = JSON.parse(event.slice(6)) as { data?: { timestamp?: number; latency_ms?: number } };
        const { timestamp, latency_ms: latency } = envelope.data ?? {};
        if (typeof timestamp === 'number' && typeof latency === 'number') delays.push(now - (timestamp + latency));
      }
    });
  });
  request.on('error', () => undefined);
  return { close: () => request.destroy() };
}

const ms = (value: number) => `${value.toFixed(1)} ms`;

export default async function run(): Promise<void> {
  const unavailable = rtspServerUnavailable();
  if (unavailable) {
    console.log(`skipped: ${unavailable}`);
    return;
  }
  const modelsDir = await ensureDefaultModels();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'caption-runs-bench-'));
  const logger = createLogger({ service: 'caption-runs', level: 'warn', json: true });
  const cameras: RtspServer[] = [];
  const broker = await startTestBroker();
  const plane = await openEmbeddedControlPlane({
    dataDir,
    namespace: 'default',
    logger,
    config: loadControllerSettings({}),
  });
  const env = {
    ARGUS_MODELS_DIR: modelsDir,
    ARGUS_DATA_DIR: dataDir,
    ARGUS_ORT_THREADS: THREADS,
    CAPTION_RUNS_PORT: '0',
  };
  const service = await startCaptionRunsFrom(loadCaptionRunsConfig(env), plane.controlPlane, broker.url, logger);
  const readers: Array<{ close(): void }> = [];
  const releases: Array<() => Promise<void>> = [];
  const captions = await subscribe(broker.url, 'live-video-captioning/+');
  // The bare subscriber: publish → receipt straight from the broker, no relay.
  const bareDelays: number[] = [];
  const bareClient = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
  bareClient.on('message', (_topic, payload) => {
    const now = Date.now();
    const { timestamp, latency_ms: latency } = (JSON.parse(payload.toString()) as { metadata: Record<string, number> })
      .metadata;
    bareDelays.push(now - (timestamp + latency));
  });
  await bareClient.subscribeAsync('live-video-captioning/+', { qos: 1 });
  try {
    for (let i = 0; i < RUNS; i++) {
      cameras.push(await startRtspServer(`cam${i}`, undefined, { width: WIDTH, height: HEIGHT, fps: CAMERA_FPS }));
    }
    const frame = await grabFrame(cameras[0].url);
    const bareModel = await bareDetector(modelsDir, frame);
    releases.push(() => bareModel.release());
    const idleTimes: number[] = [];
    for (let i = 0; i < DETECTOR_CALLS + 2; i++) {
      const took = await bareModel.time();
      if (i >= 2) idleTimes.push(took);
    }
    const detector = latencyStats(idleTimes);
    console.log(
      `bare detector (${DEFAULT_MODEL_NAMES.detector}, one ${WIDTH}×${HEIGHT} frame, ${DETECTOR_CALLS} calls): ` +
        `p50 ${ms(detector.p50)}, p99 ${ms(detector.p99)}`,
    );

    await plane.startControllers();
    const relayDelays: number[] = [];
    for (let i = 0; i < SUBSCRIBERS; i++) {
      readers.push(relayReader(`${service.url}/api/generate_captions_alerts/metadata-stream`, relayDelays));
    }
    const runIds: string[] = [];
    for (const [i, camera] of cameras.entries()) {
      const response = await fetch(`${service.url}/api/generate_captions_alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rtspUrl: camera.url, runName: `bench ${i}`, frameRate: 1 }),
      });
      if (response.status !== 200) throw new Error(`start answered ${response.status}: ${await response.text()}`);
      runIds.push(((await response.json()) as { runId: string }).runId);
    }
    // Measure once every run is in its steady state, for MEASURE_MS: a stream just opened hands over its first frames
    // in a burst (they queue behind the first captions, up to ~1 s), which is the start, not the run.
    for (const runId of runIds) {
      const topic = `live-video-captioning/${runId}`;
      await captions.waitFor((m) => m.topic === topic && m.payload.metadata.frame_id >= WARMUP_FRAMES);
    }
    const relayFrom = relayDelays.length;
    const bareFrom = bareDelays.length;
    const started = Date.now();
    captions.messages.length = 0;
    // The bare detector again while the runs caption (one call every 2 s): what detection costs under the same load.
    const loadedTimes: number[] = [];
    const load = os.loadavg()[0];
    // How long this process waited to run (the service, the workers and every subscriber share its event loop).
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    while (Date.now() - started < MEASURE_MS) {
      loadedTimes.push(await bareModel.time());
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    const loaded = latencyStats(loadedTimes);
    loopDelay.disable();
    const measured = captions.messages.filter((m) => typeof m.payload?.metadata?.latency_ms === 'number');
    const relayed = relayDelays.slice(relayFrom);
    const bare = latencyStats(bareDelays.slice(bareFrom));
    const seconds = (Date.now() - started) / 1000;
    const latency = latencyStats(measured.map((m) => m.payload.metadata.latency_ms as number));
    const perRun = runIds.map((id) => measured.filter((m) => m.topic === `live-video-captioning/${id}`).length);
    const status = await (await fetch(`${service.url}/metrics`)).text();
    const dropped = status
      .split('\n')
      .filter((line) => line.startsWith('caption_runs_dropped_frames_total{'))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    console.log(
      `bare detector during the runs (${loadedTimes.length} calls, load average ${load.toFixed(1)} on ` +
        `${os.cpus().length} CPUs): p50 ${ms(loaded.p50)}, p99 ${ms(loaded.p99)}`,
    );
    console.log(
      `caption latency, ${RUNS} runs at 1 frame/s of ${WIDTH}×${HEIGHT}, detection + offline captioner, ` +
        `${measured.length} captions in ${seconds.toFixed(0)} s (${perRun.join('/')} per run, ${dropped} frames dropped): ` +
        `p50 ${ms(latency.p50)} (${(latency.p50 / detector.p50).toFixed(2)}× the bare detector's p50), ` +
        `p99 ${ms(latency.p99)} (${(latency.p99 / detector.p99).toFixed(2)}× its p99); against the bare detector ` +
        `during the runs: ${(latency.p50 / loaded.p50).toFixed(2)}× at p50, ${(latency.p99 / loaded.p99).toFixed(2)}× at p99`,
    );
    const relay = latencyStats(relayed);
    console.log(
      `relay publish → SSE receipt, ${SUBSCRIBERS} subscribers, ${relayed.length} deliveries: ` +
        `p50 ${ms(relay.p50)}, p99 ${ms(relay.p99)} (target p99 < 50 ms); ` +
        `a bare MQTT subscriber's publish → receipt in the same run: p50 ${ms(bare.p50)}, p99 ${ms(bare.p99)} ` +
        `(${(relay.p99 / bare.p99).toFixed(2)}× at p99); this process's event-loop delay meanwhile: ` +
        `p50 ${ms(loopDelay.percentile(50) / 1e6)}, p99 ${ms(loopDelay.percentile(99) / 1e6)}`,
    );
  } finally {
    for (const reader of readers) reader.close();
    for (const release of releases) await release();
    await captions.close();
    await bareClient.endAsync(true);
    await plane.stopWork();
    await service.close();
    await plane.close();
    await broker.close();
    for (const camera of cameras) await camera.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
