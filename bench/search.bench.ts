/**
 * Filtered top-10 search over 100,000 frame vectors in the embedded store (issue 13, "Performance").
 *
 * 100,000 frames of 1792 dimensions (dataprep's default image embedder, MobileNetV2 1.4) are generated: 1,000 videos
 * of 100 frames, each video a jittered copy of one of 50 scene centres, each frame its video's centre plus noise
 * (clustered like real footage: frames of one video are near each other, videos of one scene nearer than the rest).
 * They are inserted in batches of 5,000 through LanceDbVectorStore.insert, which builds the vector index in the
 * background once the table passes its threshold; the bench waits for it. Queries are stored frames plus noise, under
 * three filters shaped like `POST /v1/dataprep/search`'s. For each: top-10 latency through the index (p50/p99), and
 * the same queries exact (the index bypassed) as the same-run baseline; recall@10 = |ANN ∩ exact| / |exact|.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LanceDbVectorStore, type VectorFilter } from '../services/lib/vectors/index.js';

/** Dimension of dataprep's default image embedder (README, "Models"). */
const DIMENSION = 1792;
const ROWS = 100_000;
const VIDEOS = 1_000;
const SCENES = 50;
const BATCH = 5_000;
const ANN_QUERIES = 200;
const EXACT_QUERIES = 12;

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

const NOISE = gaussians(1 << 20, 7);
const noiseAt = (seed: number) => Math.floor(stream(seed * 2654435761)() * (NOISE.length - DIMENSION));
const scenes = Array.from({ length: SCENES }, (_, s) => gaussians(DIMENSION, 1000 + s).map((v) => Math.max(0, v)));
const centres = Array.from({ length: VIDEOS }, (_, v) => {
  const at = noiseAt(v + 1);
  return scenes[v % SCENES].map((x, d) => x + 0.5 * NOISE[at + d]);
});

/** Frame i: video i % VIDEOS, frame number i / VIDEOS. */
function frameVector(i: number, jitter = 0.3, salt = 0): Float32Array {
  const centre = centres[i % VIDEOS];
  const at = noiseAt(i + 17 + salt * 7919);
  return centre.map((x, d) => Math.max(0, x + jitter * NOISE[at + d]));
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

export default async function searchBench(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'argus-bench-search-'));
  console.log(
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (${os.cpus().length} cores)`,
  );
  const store = await LanceDbVectorStore.open({ dir, table: 'frames', dimension: DIMENSION });
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
    const queries = picks.map((i, n) => frameVector(i, 0.15, n + 1));
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
      console.log(
        `${name}: index p50 ${ms(percentile(ann, 0.5))} p99 ${ms(percentile(ann, 0.99))} (${ANN_QUERIES} queries) | ` +
          `exact p50 ${ms(percentile(exact, 0.5))} p99 ${ms(percentile(exact, 0.99))} (${EXACT_QUERIES}) | ` +
          `recall@10 ${(found / wanted).toFixed(3)}`,
      );
    }
    console.log(
      `load average at end: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}
