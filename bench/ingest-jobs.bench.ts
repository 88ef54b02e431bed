/**
 * The job machinery's cost: 100 images through POST /media/ingest/batch (one IngestJob, run by the embedded
 * controller and the ingest worker) against the same 100 images through the synchronous POST /media/ingest, one
 * request at a time, in the same run and the same service. Reported: batch wall time (request sent → job terminal,
 * seen on the store's watch) / the sum of the synchronous request times (target ≤ 1.1), and the latency of
 * GET /media/jobs/{id} polled back to back while the job runs (p50, p99; target p99 < 10 ms), beside its baseline:
 * the same GET of a finished job while the synchronous ingests run. The pollers run on a thread of their own, so the
 * figures are the service's, not the client's waiting on the same event loop. Two rounds, summed.
 *
 * The service is built as `argus serve dataprep` builds it (its own config from a default environment: models on a
 * worker thread, LanceDB, local storage) in a temp data dir, over the embedded control plane. Duplicates are allowed
 * (the same images go through both paths); detection runs with its defaults.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { TERMINAL_INGEST_STATES } from '../operator/api/index.js';
import type { Watch } from '../operator/ports/index.js';
import { loadControllerSettings } from '../operator/config.js';
import { openEmbeddedControlPlane } from '../operator/embedded-control-plane.js';
import { createApp } from '../services/dataprep/app.js';
import { loadDataprepConfig } from '../services/dataprep/config.js';
import { ingestWorker } from '../services/dataprep/ingest-worker/ingest-worker.js';
import { openDataprepRuntime } from '../services/dataprep/runtime/open-runtime.js';
import { listen } from '../services/lib/http/index.js';
import { createLogger } from '../services/lib/log/index.js';
import { FIXTURE_PHOTOS } from '../test/support/fixtures.js';
import { fixtureImage } from '../test/support/media.js';
import { ensureDefaultModels } from '../test/support/models.js';
import { percentile } from './latency-stats.js';

const IMAGES = 100;
/** Rounds of (100 synchronous, then one batch of the same 100), summed: load from other processes hits both. */
const ROUNDS = 2;
/** Pause between two polls of the job status. */
const POLL_GAP_MS = 20;

/** 100 distinct JPEGs (different crops of the fixture photos), 320 px wide, as base64. */
async function benchImages(): Promise<string[]> {
  const photos = await Promise.all(FIXTURE_PHOTOS.map((name) => readFile(fixtureImage(name))));
  const out: string[] = [];
  for (let i = 0; i < IMAGES; i++) {
    const photo = sharp(photos[i % photos.length]);
    const { width = 640, height = 480 } = await photo.metadata();
    const side = Math.floor(Math.min(width, height) * (0.6 + (i % 7) * 0.05));
    const left = Math.floor(((width - side) * (i % 5)) / 4);
    const top = Math.floor(((height - side) * (i % 3)) / 2);
    const jpg = await photo.extract({ left, top, width: side, height: side }).resize(320).jpeg().toBuffer();
    out.push(jpg.toString('base64'));
  }
  return out;
}

/**
 * Polls `url` back to back (a pause of POLL_GAP_MS between answers) from a thread of its own, so the client's work
 * never waits on the service's event loop; `stop()` resolves with every latency in ms.
 */
function startPoller(url: string): { stop(): Promise<number[]> } {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const { performance } = require('node:perf_hooks');
     let running = true;
     const times = [];
     parentPort.on('message', () => (running = false));
     (async () => {
       while (running) {
         const t0 = performance.now();
         const res = await fetch(workerData.url);
         await res.text();
         if (res.status !== 200) throw new Error('GET answered ' + res.status);
         times.push(performance.now() - t0);
         await new Promise((resolve) => setTimeout(resolve, workerData.gap));
       }
       parentPort.postMessage(times);
     })();`,
    { eval: true, workerData: { url, gap: POLL_GAP_MS } },
  );
  const done = new Promise<number[]>((resolve, reject) => {
    worker.once('message', (times: number[]) => resolve(times));
    worker.once('error', reject);
  });
  return {
    stop: async () => {
      worker.postMessage('stop');
      const times = await done;
      await worker.terminate();
      return times;
    },
  };
}

export default async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-ingest-jobs-'));
  const logger = createLogger({ service: 'bench', level: 'error', json: true });
  const config = loadDataprepConfig({
    ARGUS_DATA_DIR: dataDir,
    ARGUS_MODELS_DIR: await ensureDefaultModels(),
    MM_DATAPREP_ALLOW_DUPLICATE_UPLOADS: 'true',
  });
  const runtime = await openDataprepRuntime(config, logger);
  const plane = await openEmbeddedControlPlane({
    dataDir,
    namespace: 'default',
    logger,
    config: loadControllerSettings({}),
  });
  const { app, services } = createApp({ ...runtime.deps, controlPlane: plane.controlPlane });
  plane.controlPlane.registerWorker('ingest', ingestWorker(services, plane.controlPlane.resources));
  await plane.startControllers();
  const server = await listen(app, { port: 0, host: '127.0.0.1', logger, name: 'bench' });
  const base = `${server.url}/v1/dataprep`;
  const resources = plane.controlPlane.resources;
  const post = (pathname: string, body: unknown) =>
    fetch(`${base}${pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  try {
    const images = await benchImages();
    // Warm-up: first calls of each model session and the LanceDB table, and one small job (polled as a baseline).
    for (const image of images.slice(0, 3)) {
      await post('/media/ingest', { type: 'image_base64', image_base64: image, bucket_name: 'bench-warmup' });
    }
    const warmJob = (await (
      await post('/media/ingest/batch', {
        bucket_name: 'bench-warmup-job',
        images: images.slice(3, 5).map((image) => ({ type: 'image_base64', image_base64: image })),
      })
    ).json()) as { job_id: string };

    /** One 100-image batch: request → terminal (seen on the store's watch), GET polled back to back meanwhile. */
    const runBatch = async (round: number) => {
      const started = performance.now();
      const res = await post('/media/ingest/batch', {
        bucket_name: `bench-batch-${round}`,
        images: images.map((image, i) => ({ type: 'image_base64', image_base64: image, filename: `img-${i}.jpg` })),
      });
      if (res.status !== 202) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
      const { job_id: jobId } = (await res.json()) as { job_id: string };
      let finishedAt = 0;
      let state = '';
      let watch: Watch | undefined;
      const terminal = new Promise<void>((resolve) => {
        void resources
          .watch('IngestJob', 'default', (event) => {
            const current = event.object.status?.state;
            if (event.object.metadata.name !== jobId || !current || !TERMINAL_INGEST_STATES.includes(current)) return;
            if (finishedAt) return;
            finishedAt = performance.now();
            state = current;
            resolve();
          })
          .then((w) => (watch = w));
      });
      const poller = startPoller(`${base}/media/jobs/${jobId}`);
      await terminal;
      const polls = await poller.stop();
      await watch?.stop();
      return { batch: finishedAt - started, polls, state };
    };

    const rounds: Array<{ sync: number; batch: number; polls: number[]; state: string }> = [];
    const baselinePolls: number[] = [];
    /** The 100 images one synchronous request at a time: the sum of the request times. */
    const runSync = async (round: number) => {
      // Baseline of the polling figure: the same GET (of the finished warm-up job) while synchronous ingests run.
      const baseline = startPoller(`${base}/media/jobs/${warmJob.job_id}`);
      let sync = 0;
      for (const [i, image] of images.entries()) {
        const started = performance.now();
        const res = await post('/media/ingest', {
          type: 'image_base64',
          image_base64: image,
          filename: `img-${i}.jpg`,
          bucket_name: `bench-sync-${round}`,
        });
        if (res.status !== 201) throw new Error(`sync ingest answered ${res.status}: ${await res.text()}`);
        sync += performance.now() - started;
      }
      baselinePolls.push(...(await baseline.stop()));
      return sync;
    };

    for (let round = 1; round <= ROUNDS; round++) {
      // Odd rounds go synchronous first, even ones batch first, so a drift in the machine's load hits both alike.
      if (round % 2 === 1) {
        const sync = await runSync(round);
        rounds.push({ sync, ...(await runBatch(round)) });
      } else {
        const batch = await runBatch(round);
        rounds.push({ sync: await runSync(round), ...batch });
      }
    }

    let syncTotal = 0;
    let batchTotal = 0;
    for (const [i, r] of rounds.entries()) {
      syncTotal += r.sync;
      batchTotal += r.batch;
      console.log(
        `round ${i + 1}: synchronous sum ${(r.sync / 1000).toFixed(2)} s, batch ${(r.batch / 1000).toFixed(2)} s (${r.state}), ratio ${(r.batch / r.sync).toFixed(3)}`,
      );
    }
    const polls = rounds.flatMap((r) => r.polls).sort((a, b) => a - b);
    baselinePolls.sort((a, b) => a - b);
    console.log(`images per round: ${IMAGES} (320 px JPEG, detection on); rounds: ${ROUNDS}`);
    console.log(`ratio batch / sum of synchronous, all rounds: ${(batchTotal / syncTotal).toFixed(3)} (target ≤ 1.1)`);
    console.log(
      `GET /media/jobs/{id} while running: ${polls.length} polls, p50 ${percentile(polls, 50).toFixed(2)} ms, p99 ${percentile(polls, 99).toFixed(2)} ms (target < 10 ms)`,
    );
    console.log(
      `baseline, the same GET of a finished job while the synchronous ingests run: ${baselinePolls.length} polls, p50 ${percentile(baselinePolls, 50).toFixed(2)} ms, p99 ${percentile(baselinePolls, 99).toFixed(2)} ms`,
    );
  } finally {
    await server.close();
    await plane.close();
    await runtime.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
