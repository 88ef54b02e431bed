import { loadFrameAnalysisConfig } from '../services/frame-analysis/config.js';
/**
 * Frame analysis: `POST /api/v1/analyze/batch` with 3 frames of 1280×720 JPEG and no VLM, p50 and p99 over 100
 * sequential requests, against the bare pose-model time for the same 3 frames measured in the same run, in
 * alternating rounds (the preprocessed input tensors fed to `session.run` three times, on a session hosted like the
 * service's); then throughput with 8 concurrent clients. The service runs in this process with its real wiring
 * (`startFrameAnalysis`, worker-hosted session, 2 intra-op threads); the client sends a prebuilt multipart body over
 * keep-alive loopback. Targets: p50 ≤ 1.3 × bare model time, and under 150 ms.
 */
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { startFrameAnalysis } from '../services/frame-analysis/main.js';
import { decodeFrame } from '../services/frame-analysis/frames/decode-frame.js';
import { importDefaultModels, multiPoseModel } from '../services/lib/inference/import/index.js';
import { createSession, readManifest } from '../services/lib/inference/index.js';
import { allocateInput, prepareImage } from '../services/lib/inference/image-tensor.js';
import { createLogger } from '../services/lib/log/index.js';
import { latencyStats } from './latency-stats.js';

const REQUESTS = 100;
const WARMUP = 5;
const CLIENTS = 8;
const REQUESTS_PER_CLIENT = 15;
const ROUNDS = 4;
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const modelsDir = path.join(repoRoot, '.models');

/** Three 1280×720 JPEG frames of real people walking (the fixture photo, shifted a little each frame). */
async function frames(): Promise<Buffer[]> {
  const photo = path.join(repoRoot, 'test/fixtures/images/person_multi_det.jpg');
  return Promise.all(
    [0, 12, 24].map((dx) =>
      sharp(photo)
        .resize(1280 + 48, 720, { fit: 'cover' })
        .extract({ left: dx, top: 0, width: 1280, height: 720 })
        .jpeg({ quality: 85 })
        .toBuffer(),
    ),
  );
}

function multipartBody(jpegs: Buffer[]): { body: Buffer; contentType: string } {
  const boundary = '----argus-bench-boundary';
  const parts: Buffer[] = [
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="entity_id"\r\n\r\nbench\r\n`),
  ];
  jpegs.forEach((jpeg, i) => {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="frames"; filename="f${i}.jpg"\r\n` +
          'Content-Type: image/jpeg\r\n\r\n',
      ),
      jpeg,
      Buffer.from('\r\n'),
    );
  });
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * The bare model: a session hosted like the service's (worker thread, 2 threads) and the preprocessed inputs of the
 * same frames; `once()` times three session.run calls, one per frame.
 */
async function openBareModel(jpegs: Buffer[]): Promise<{ once(): Promise<number>; release(): Promise<void> }> {
  const dir = path.join(modelsDir, multiPoseModel.name);
  const { manifest, modelPath } = await readManifest(dir);
  const spec = manifest.image!;
  const { session } = await createSession(modelPath, { provider: 'cpu', threads: 2, isolation: 'worker' });
  const inputs: ort.Tensor[] = [];
  for (const jpeg of jpegs) {
    const decoded = await decodeFrame(jpeg, 40_000_000, Math.max(spec.width, spec.height));
    if (!decoded.ok) throw new Error(decoded.reason);
    const buffer = allocateInput(spec, 1);
    await prepareImage(decoded.image, spec, buffer, 0);
    inputs.push(new ort.Tensor(spec.dtype, buffer, [1, spec.height, spec.width, 3]));
  }
  return {
    once: async () => {
      const started = performance.now();
      for (const input of inputs) await session.run({ [spec.name]: input }, ['poses']);
      return performance.now() - started;
    },
    release: () => session.release(),
  };
}

function post(agent: http.Agent, url: URL, body: Buffer, contentType: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': contentType, 'content-length': body.length } },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`HTTP ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs the benchmark and prints its figures. */
export default async function run(): Promise<void> {
  await importDefaultModels(modelsDir, { models: [multiPoseModel] });
  const jpegs = await frames();
  const { body, contentType } = multipartBody(jpegs);
  console.log(`3 frames 1280×720 JPEG, ${(body.length / 1024).toFixed(0)} KiB per request, no VLM`);

  const bare = await openBareModel(jpegs);
  const service = await startFrameAnalysis(
    loadFrameAnalysisConfig({ ARGUS_MODELS_DIR: modelsDir, FRAME_ANALYSIS_PORT: '0', ARGUS_ORT_THREADS: '2' }),
    createLogger({ service: 'frame-analysis', level: 'warn', json: true }),
  );
  const url = new URL('/api/v1/analyze/batch', service.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const bareTimes: number[] = [];
  const serviceTimes: number[] = [];
  let throughput: number;
  try {
    for (let i = 0; i < WARMUP; i++) {
      await bare.once();
      await post(agent, url, body, contentType);
    }
    // Baseline and service alternate in rounds, so both see the same load on a shared machine.
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < REQUESTS / ROUNDS; i++) bareTimes.push(await bare.once());
      for (let i = 0; i < REQUESTS / ROUNDS; i++) serviceTimes.push(await post(agent, url, body, contentType));
    }
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = 0; i < REQUESTS_PER_CLIENT; i++) await post(agent, url, body, contentType);
      }),
    );
    throughput = (CLIENTS * REQUESTS_PER_CLIENT) / ((performance.now() - started) / 1000);
  } finally {
    agent.destroy();
    await service.close();
    await bare.release();
  }
  const bareStats = latencyStats(bareTimes);
  const serviceStats = latencyStats(serviceTimes);
  const bound = 1000 / bareStats.p50;
  const f = (x: number) => x.toFixed(1);
  console.log(`bare model, 3 frames, ${REQUESTS} runs: p50 ${f(bareStats.p50)} ms, p99 ${f(bareStats.p99)} ms`);
  console.log(`service, ${REQUESTS} sequential requests: p50 ${f(serviceStats.p50)} ms, p99 ${f(serviceStats.p99)} ms`);
  console.log(
    `p50 / bare model p50: ${(serviceStats.p50 / bareStats.p50).toFixed(2)} (target ≤ 1.3); ` +
      `p50 under 150 ms: ${serviceStats.p50 < 150}`,
  );
  console.log(
    `${CLIENTS} concurrent clients: ${throughput.toFixed(2)} req/s (${(throughput * 3).toFixed(1)} frames/s); ` +
      `bare-model bound ${bound.toFixed(2)} req/s → ${(throughput / bound).toFixed(2)} of it`,
  );
}
