/**
 * Filtered top-10 search over 100,000 frame vectors in the embedded store (issue 13, "Performance").
 *
 * 100,000 frames of 1792 dimensions (dataprep's default image embedder, MobileNetV2 1.4) are generated: 1,000 videos
 * of 100 frames over 50 scenes
 * (clustered like real footage: frames of one video are near each other, videos of one scene nearer than the rest;
 * see frameVector).
 * They are inserted in batches of 5,000 through LanceDbVectorStore.insert, which builds the vector index in the
 * background once the table passes its threshold; the bench waits for it. Queries are stored frames plus noise, under
 * three filters shaped like `POST /v1/dataprep/search`'s. For each: top-10 latency through the index (p50/p99), and
 * the same queries exact (the index bypassed) as the same-run baseline; recall@10 = |ANN ∩ exact| / |exact|.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadDataprepConfig } from '../services/dataprep/config.js';
import { startDataprep } from '../services/dataprep/main.js';
import { vectorFilterFor } from '../services/dataprep/search/search-filters.js';
import type { SearchFilters } from '../services/dataprep/search/search-query.js';
import { loadModels } from '../services/lib/inference/index.js';
import { createLogger } from '../services/lib/log/index.js';
import { decodeImage } from '../services/lib/media/image-decode.js';
import { LanceDbVectorStore, type VectorFilter } from '../services/lib/vectors/index.js';
import { fixtureImage } from '../test/support/fixtures.js';
import { ensureDefaultModels } from '../test/support/models.js';

/** Dimension of dataprep's default image embedder (README, "Models"). */
const DIMENSION = 1792;
const ROWS = 100_000;
const VIDEOS = 1_000;
const SCENES = 50;
const BATCH = 5_000;
const ANN_QUERIES = 200;
const EXACT_QUERIES = 12;
const ENDPOINT_QUERIES = 40;

/** Deterministic xorshift stream, so every run (and the query side) sees the same frames. */
function stream(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

function gaussians(count: number, seed: number): Float32Array {
  const next = stream(seed);
  return Float32Array.from(
    { length: count },
    () => Math.sqrt(-2 * Math.log(next() + 1e-12)) * Math.cos(2 * Math.PI * next()),
  );
}

/*
 * Image embeddings lie near a low-dimensional manifold: a frame is its scene's centre plus a mix of LATENT directions,
 * a video's mix drifting slowly from frame to frame, plus a little independent noise. (Independent noise in all 1792
 * dimensions would make every far neighbour equidistant, which no embedder produces and no index can rank.)
 */
const LATENT = 24;
const directions = Array.from({ length: LATENT }, (_, l) => gaussians(DIMENSION, 5000 + l));
const scenes = Array.from({ length: SCENES }, (_, s) => gaussians(DIMENSION, 1000 + s).map((v) => Math.abs(v)));

/** Frame i: video i % VIDEOS, frame number i / VIDEOS; `salt` > 0 gives a nearby query instead of the frame. */
function frameVector(i: number, salt = 0): Float32Array {
  const video = i % VIDEOS;
  const frame = Math.floor(i / VIDEOS);
  const start = gaussians(LATENT, 20_000 + video);
  const drift = gaussians(LATENT, 40_000 + video);
  const jitter = gaussians(LATENT + 1, 60_000 + i * 31 + salt * 7919);
  const weights = start.map((w, l) => 1.5 * w + 0.02 * frame * drift[l] + (salt > 0 ? 0.15 : 0.05) * jitter[l]);
  const noise = gaussians(DIMENSION, 90_000 + i * 131 + salt);
  const out = new Float32Array(DIMENSION);
  const scene = scenes[video % SCENES];
  for (let d = 0; d < DIMENSION; d++) {
    let v = scene[d] + 0.05 * noise[d];
    for (let l = 0; l < LATENT; l++) v += 0.3 * weights[l] * directions[l][d];
    out[d] = v;
  }
  return out;
}

function frameMetadata(i: number) {
  const video = i % VIDEOS;
  const frame = Math.floor(i / VIDEOS);
  return {
    video_id: `video-${video}`,
    bucket_name: `bucket-${video % 4}`,
    kind: i % 10 === 0 ? 'crop' : 'frame',
    frame_id: frame,
    timestamp: frame * 2,
    tags: video % 3 === 0 ? ['night'] : [],
    labels: video % 5 === 0 ? ['bus', 'person'] : ['person'],
    upload_ts: 1.7e9 + video * 60,
  };
}

/** Filters as the search endpoint builds them (kinds, bucket, position, labels, ingest time, videos). */
const FILTERS: Array<{ name: string; filter: (i: number) => VectorFilter }> = [
  {
    name: 'bucket + frame kinds + position (~22%)',
    filter: (i) => ({
      equals: { bucket_name: `bucket-${(i % VIDEOS) % 4}` },
      in: { kind: ['frame', 'image'] },
      range: { timestamp: { gte: 20, lte: 180 } },
    }),
  },
  {
    name: 'labels all [bus] + ingest time (~10%)',
    filter: () => ({ containsAll: { labels: ['bus'] }, range: { upload_ts: { gte: 1.7e9, lte: 1.7e9 + 500 * 60 } } }),
  },
  {
    name: 'three videos (0.3%)',
    filter: (i) => ({ in: { video_id: [`video-${i % VIDEOS}`, 'video-17', 'video-400'] } }),
  },
];

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

const ms = (v: number) => `${v.toFixed(1)} ms`;
const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

export default async function searchBench(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'argus-bench-search-'));
  // dataprep's own image table under this data dir, so the endpoint part searches the same rows.
  const { vectors } = loadDataprepConfig({ ARGUS_DATA_DIR: dataDir });
  if (vectors.backend !== 'lancedb') throw new Error('the search bench needs the embedded LanceDB store');
  console.log(`load average at start: ${loadAverage()} (${os.cpus().length} cores)`);
  const store = await LanceDbVectorStore.open({ dir: vectors.dir, table: vectors.table, dimension: DIMENSION });
  try {
    let started = performance.now();
    for (let from = 0; from < ROWS; from += BATCH) {
      const records = Array.from({ length: Math.min(BATCH, ROWS - from) }, (_, j) => ({
        id: `frame-${from + j}`,
        vector: frameVector(from + j),
        metadata: frameMetadata(from + j),
      }));
      await store.insert(records);
    }
    const inserted = performance.now() - started;
    started = performance.now();
    await store.indexSettled();
    console.log(
      `${ROWS} × ${DIMENSION}-d inserted in ${(inserted / 1000).toFixed(1)} s (${Math.round(ROWS / (inserted / 1000))} rows/s); ` +
        `index ready ${((performance.now() - started) / 1000).toFixed(1)} s after the last insert`,
    );
    const next = stream(99);
    const picks = Array.from({ length: ANN_QUERIES }, () => Math.floor(next() * ROWS));
    const queries = picks.map((i, n) => frameVector(i, n + 1));
    let allFound = 0;
    let allWanted = 0;
    for (const { name, filter } of FILTERS) {
      // Warm-up: the first queries load the index and the scalar columns into memory.
      for (let n = 0; n < 5; n++) await store.search(queries[n], 10, filter(picks[n]));
      const ann: number[] = [];
      const annHits: string[][] = [];
      for (let n = 0; n < ANN_QUERIES; n++) {
        const t = performance.now();
        const hits = await store.search(queries[n], 10, filter(picks[n]));
        ann.push(performance.now() - t);
        annHits.push(hits.map((h) => h.id));
      }
      const exact: number[] = [];
      let found = 0;
      let wanted = 0;
      for (let n = 0; n < EXACT_QUERIES; n++) {
        const t = performance.now();
        const hits = await store.search(queries[n], 10, filter(picks[n]), { exact: true });
        exact.push(performance.now() - t);
        const approximate = new Set(annHits[n]);
        found += hits.filter((h) => approximate.has(h.id)).length;
        wanted += hits.length;
      }
      allFound += found;
      allWanted += wanted;
      console.log(
        `${name}: index p50 ${ms(percentile(ann, 0.5))} p99 ${ms(percentile(ann, 0.99))} (${ANN_QUERIES} queries) | ` +
          `exact p50 ${ms(percentile(exact, 0.5))} p99 ${ms(percentile(exact, 0.99))} (${EXACT_QUERIES}) | ` +
          `recall@10 ${(found / wanted).toFixed(3)}`,
      );
    }
    console.log(
      `recall@10 over all ${FILTERS.length * EXACT_QUERIES} exact queries: ${(allFound / allWanted).toFixed(3)}`,
    );
    await endpointPart(dataDir, store);
    console.log(`load average at end: ${loadAverage()}`);
  } finally {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * `POST /v1/dataprep/search` by image (a fixture photo, frames of one bucket within a stretch of the videos) on the
 * dataprep service started over the same table, against the bare work in the same run: decoding the photo, embedding
 * it with the service's own image-embedder settings and one store search with the filter and candidate count the
 * endpoint uses (top_k 10 → 50 candidates).
 */
async function endpointPart(dataDir: string, store: LanceDbVectorStore): Promise<void> {
  const modelsDir = await ensureDefaultModels();
  const photo = await readFile(fixtureImage('pexels_double_decker_bus.jpg'));
  const filters: SearchFilters = { bucketName: 'bucket-1', fromSeconds: 20, toSeconds: 180 };
  const body = JSON.stringify({
    image_base64: photo.toString('base64'),
    kinds: ['frame'],
    bucket_name: filters.bucketName,
    from_seconds: filters.fromSeconds,
    to_seconds: filters.toSeconds,
    top_k: 10,
  });
  const service = await startDataprep(
    loadDataprepConfig({
      ARGUS_DATA_DIR: dataDir,
      ARGUS_MODELS_DIR: modelsDir,
      ARGUS_LOG_LEVEL: 'error',
      MM_DATAPREP_HOST_PORT: '0',
    }),
    createLogger({ service: 'search-bench', level: 'error', json: true }),
  );
  const { platform, models: modelNames } = loadDataprepConfig({ ARGUS_MODELS_DIR: modelsDir });
  const { provider, threads, isolation } = platform;
  const models = await loadModels({ modelsDir, provider, threads, isolation, imageEmbedder: modelNames.imageEmbedder });
  try {
    await models.warmUp(['imageEmbedder']);
    const request = async () => {
      const response = await fetch(`${service.url}/v1/dataprep/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const answer = (await response.json()) as { hits?: unknown[]; message?: string };
      if (response.status !== 200 || !answer.hits?.length) {
        throw new Error(`search answered ${response.status} ${answer.message ?? ''}`);
      }
    };
    const bare = async () => {
      const image = await decodeImage(photo);
      const [vector] = await models.imageEmbedder.embed([image]);
      const hits = await store.search(vector, 50, vectorFilterFor(filters, 'frame'));
      if (hits.length === 0) throw new Error('the bare search found nothing');
    };
    for (let n = 0; n < 3; n++) {
      await request();
      await bare();
    }
    const endpoint: number[] = [];
    const baseline: number[] = [];
    // Alternating, so both see the same machine.
    for (let n = 0; n < ENDPOINT_QUERIES; n++) {
      let t = performance.now();
      await request();
      endpoint.push(performance.now() - t);
      t = performance.now();
      await bare();
      baseline.push(performance.now() - t);
    }
    const p50 = percentile(endpoint, 0.5) / percentile(baseline, 0.5);
    const p99 = percentile(endpoint, 0.99) / percentile(baseline, 0.99);
    console.log(
      `POST /search by image (${ENDPOINT_QUERIES}): p50 ${ms(percentile(endpoint, 0.5))} ` +
        `p99 ${ms(percentile(endpoint, 0.99))} | bare decode + embed + store search ` +
        `p50 ${ms(percentile(baseline, 0.5))} p99 ${ms(percentile(baseline, 0.99))} | ` +
        `endpoint / bare: p50 ${p50.toFixed(2)}× p99 ${p99.toFixed(2)}×`,
    );
  } finally {
    await models.release();
    await service.close();
  }
}
