/**
 * Search by picture on photos the ranking was not tuned on (issue 29): does `POST /search` with `image_base64` of a
 * changed copy find the original first?
 *
 * 32 photos (bench/eval-photos.ts: 7 test fixtures + 25 from npm packages; a tuning and a held-out split) are
 * ingested through `POST /media/ingest` into two dataprep services started side by side, one writing today's
 * descriptor (`global-v1`, the baseline) and one the new one (`lowpass-v2`), ingests alternating between them so both
 * see the same machine. Each photo is then searched on both with 8 changed copies (below), and rank 1 / reciprocal
 * rank of the original among the top 10 is counted: recall@1 and MRR per split and per change. Text→image (the
 * search test's five queries) runs on both over the same 32 photos. Costs, same run: ingest throughput (photos/s
 * through the endpoint, detection on as by default) and image-query latency through the endpoint.
 *
 * A second part compares descriptor ideas in-process on the same photos and copies (exact cosine ranking, as the
 * store's exact search): mirror averaging, hub correction (centring on the mean of the tuning photos), power
 * normalisation, multi-crop, the low-pass descriptor, and their combinations; with model passes per image.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import sharp, { type Sharp } from 'sharp';
import { loadDataprepConfig } from '../services/dataprep/config.js';
import { startDataprep, type StartedDataprep } from '../services/dataprep/main.js';
import {
  imageDescriptor,
  l2Normalize,
  loadModels,
  type ImageDescriptorName,
  type ImageEmbedder,
  type RgbImage,
} from '../services/lib/inference/index.js';
import { createLogger } from '../services/lib/log/index.js';
import { decodeImage } from '../services/lib/media/image-decode.js';
import { ensureDefaultModels } from '../test/support/models.js';
import { ensureEvalPhotos, type EvalPhoto, type Split } from './eval-photos.js';
import { latencyStats } from './latency-stats.js';

/** One editing step of a changed copy, given the image's current size. */
type Step = (image: Sharp, width: number, height: number) => Sharp;

const crop =
  (share: number, centred: boolean): Step =>
  (image, width, height) => {
    const w = Math.round(width * share);
    const h = Math.round(height * share);
    const left = centred ? Math.round((width - w) / 2) : 0;
    const top = centred ? Math.round((height - h) / 2) : 0;
    return image.extract({ left, top, width: w, height: h });
  };
const mirror: Step = (image) => image.flop();
const blur: Step = (image) => image.blur(1.5);
const scale: Step = (image, width) => image.resize(Math.round(width * 0.7));

/** The changed copies: six single changes, the corner crop, and the issue's composite. JPEG quality 90 unless said. */
const CHANGES: Array<{ name: string; steps: Step[]; quality?: number }> = [
  { name: 'crop 80 % (centre)', steps: [crop(0.8, true)] },
  { name: 'crop 80 % (top-left)', steps: [crop(0.8, false)] },
  { name: 'mirror', steps: [mirror] },
  { name: 'blur σ 1.5', steps: [blur] },
  { name: 'scale 70 %', steps: [scale] },
  { name: 'JPEG quality 30', steps: [], quality: 30 },
  { name: 'brightness +30 %', steps: [(image) => image.modulate({ brightness: 1.3 })] },
  { name: 'composite: crop 80 % + mirror + blur σ 1.5 + scale 70 %', steps: [crop(0.8, true), mirror, blur, scale] },
];
const COMPOSITE = CHANGES.length - 1;

/** The changed copy of `file` by change `c`, as JPEG. */
async function changedCopy(file: string, c: number): Promise<Buffer> {
  let png = await sharp(file).png().toBuffer();
  for (const step of CHANGES[c].steps) {
    const { width, height } = await sharp(png).metadata();
    png = await step(sharp(png), width!, height!).png().toBuffer();
  }
  return sharp(png)
    .jpeg({ quality: CHANGES[c].quality ?? 90 })
    .toBuffer();
}

/** One query: the photo it should find, its split and change, and the copy. */
interface Query {
  photo: number;
  split: Split;
  change: number;
  jpeg: Buffer;
}

/** Ranks (1-based; 0 = not in the top 10) of a set of queries, by split and change. */
class Ranks {
  private readonly rows: Array<{ split: Split; change: number; rank: number; photo: number; top: number }> = [];

  add(query: Query, rank: number, top: number): void {
    this.rows.push({ split: query.split, change: query.change, rank, photo: query.photo, top });
  }

  /** recall@1 and MRR of the rows matching. */
  of(split: Split, change?: number): { r1: number; mrr: number; n: number } {
    const rows = this.rows.filter((r) => r.split === split && (change === undefined || r.change === change));
    const r1 = rows.filter((r) => r.rank === 1).length / rows.length;
    const mrr = rows.reduce((sum, r) => sum + (r.rank > 0 ? 1 / r.rank : 0), 0) / rows.length;
    return { r1, mrr, n: rows.length };
  }

  /** The queries not answered first, as `photo / change → rank`. */
  misses(photos: EvalPhoto[], split: Split): string[] {
    return this.rows
      .filter((r) => r.split === split && r.rank !== 1)
      .map(
        (r) =>
          `${photos[r.photo].name} / ${CHANGES[r.change].name} → ${r.rank || '>10'} (first: ${photos[r.top]?.name})`,
      );
  }

  /** The wrong photo that comes first most often, and how often ("hub"). */
  hub(photos: EvalPhoto[]): string {
    const counts = new Map<number, number>();
    for (const r of this.rows) if (r.rank !== 1 && r.top >= 0) counts.set(r.top, (counts.get(r.top) ?? 0) + 1);
    const [photo, n] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? [-1, 0];
    return n === 0 ? 'none' : `${photos[photo].name}, first for ${n} copies of other photos`;
  }
}

const f3 = (v: number) => v.toFixed(3);
const fmt = ({ r1, mrr }: { r1: number; mrr: number }) => `${f3(r1)} / ${f3(mrr)}`;

export default async function searchQualityBench(): Promise<void> {
  const photos = await ensureEvalPhotos();
  const split = (s: Split) => photos.filter((p) => p.split === s).length;
  console.log(`${photos.length} photos: tuning ${split('tuning')}, held-out ${split('held-out')}; sources:`);
  for (const photo of photos) console.log(`  ${photo.split.padEnd(8)} ${photo.name}: ${photo.source}`);
  const queries: Query[] = [];
  for (const [p, photo] of photos.entries()) {
    for (let c = 0; c < CHANGES.length; c++) {
      queries.push({ photo: p, split: photo.split, change: c, jpeg: await changedCopy(photo.file, c) });
    }
  }
  await endpointPart(photos, queries);
  await ideasPart(photos, queries);
}

/** The two services' figures through the real endpoints. */
async function endpointPart(photos: EvalPhoto[], queries: Query[]): Promise<void> {
  const modelsDir = await ensureDefaultModels();
  const logger = createLogger({ service: 'search-quality-bench', level: 'error', json: true });
  const descriptors: ImageDescriptorName[] = ['global-v1', 'lowpass-v2'];
  const dirs: string[] = [];
  const services: StartedDataprep[] = [];
  try {
    for (const descriptor of descriptors) {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'argus-bench-quality-'));
      dirs.push(dir);
      const config = loadDataprepConfig({
        ARGUS_DATA_DIR: dir,
        ARGUS_MODELS_DIR: modelsDir,
        ARGUS_LOG_LEVEL: 'error',
        MM_DATAPREP_HOST_PORT: '0',
        MM_DATAPREP_IMAGE_DESCRIPTOR: descriptor,
        // The timing rounds ingest the same photos again into other buckets.
        MM_DATAPREP_ALLOW_DUPLICATE_UPLOADS: 'true',
      });
      services.push(await startDataprep(config, logger));
    }
    const post = async (s: number, route: string, body: unknown) => {
      const response = await fetch(`${services[s].url}/v1/dataprep${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as { video_id?: string; hits?: Array<{ video_id: string }> };
      if (response.status >= 300) throw new Error(`${route} answered ${response.status}: ${JSON.stringify(answer)}`);
      return answer;
    };
    const files = await Promise.all(photos.map((photo) => readFile(photo.file)));
    const ingest = (s: number, p: number, bucket: string) =>
      post(s, '/media/ingest', {
        type: 'image_base64',
        image_base64: files[p].toString('base64'),
        filename: photos[p].name,
        bucket_name: bucket,
      });
    // Warm-up (models loaded, tables created), then two timed rounds; the first is the searched archive.
    for (let s = 0; s < services.length; s++) for (let p = 0; p < 2; p++) await ingest(s, p, 'warmup');
    const ids = descriptors.map(() => new Map<string, number>());
    const ingestMs = descriptors.map(() => 0);
    for (const bucket of ['eval', 'again']) {
      for (let p = 0; p < photos.length; p++) {
        // Alternating which service goes first, so neither always meets a cache the other warmed.
        for (const s of p % 2 === 0 ? [0, 1] : [1, 0]) {
          const started = performance.now();
          const { video_id } = await ingest(s, p, bucket);
          ingestMs[s] += performance.now() - started;
          if (bucket === 'eval') ids[s].set(video_id!, p);
        }
      }
    }
    const ranks = descriptors.map(() => new Ranks());
    const latency = descriptors.map((): number[] => []);
    for (const [q, query] of queries.entries()) {
      for (const s of q % 2 === 0 ? [0, 1] : [1, 0]) {
        const started = performance.now();
        const { hits } = await post(s, '/search', {
          image_base64: query.jpeg.toString('base64'),
          bucket_name: 'eval',
          kinds: ['frame'],
          top_k: 10,
        });
        latency[s].push(performance.now() - started);
        const found = hits!.map((hit) => ids[s].get(hit.video_id) ?? -1);
        ranks[s].add(query, found.indexOf(query.photo) + 1, found[0] ?? -1);
      }
    }
    const text = await Promise.all(
      services.map((_, s) => textQueries(photos, (body) => post(s, '/search', body), ids[s])),
    );

    console.log('\nthrough the endpoints (recall@1 / MRR; top 10):');
    console.log(
      `| change | tuning, ${descriptors[0]} | tuning, ${descriptors[1]} | held-out, ${descriptors[0]} | held-out, ${descriptors[1]} |`,
    );
    console.log('|---|---|---|---|---|');
    for (let c = 0; c < CHANGES.length; c++) {
      const cells = (['tuning', 'held-out'] as const).flatMap((s) => ranks.map((r) => fmt(r.of(s, c))));
      console.log(`| ${CHANGES[c].name} | ${cells.join(' | ')} |`);
    }
    const all = (['tuning', 'held-out'] as const).flatMap((s) => ranks.map((r) => fmt(r.of(s))));
    console.log(`| all ${queries.length / photos.length} changes | ${all.join(' | ')} |`);
    for (const [s, descriptor] of descriptors.entries()) {
      const held = ranks[s].of('held-out');
      console.log(
        `${descriptor}: held-out ${held.n} queries, composite recall@1 ${f3(ranks[s].of('held-out', COMPOSITE).r1)}`,
      );
      for (const split of ['tuning', 'held-out'] as const) {
        const misses = ranks[s].misses(photos, split);
        console.log(`  ${split} not first (${misses.length}): ${misses.join('; ') || 'none'}`);
      }
      console.log(`  hub: ${ranks[s].hub(photos)}`);
      console.log(`  text → image: ${text[s]}`);
    }
    const rounds = photos.length * 2;
    const rate = ingestMs.map((ms) => rounds / (ms / 1000));
    console.log(
      `ingest through POST /media/ingest (${rounds} photos each, detection on): ${descriptors
        .map((d, s) => `${d} ${rate[s].toFixed(2)} photos/s`)
        .join(', ')}; new / baseline throughput ${(rate[1] / rate[0]).toFixed(3)}`,
    );
    const lat = latency.map(latencyStats);
    console.log(
      `image query through POST /search (${queries.length} each): ${descriptors
        .map((d, s) => `${d} p50 ${lat[s].p50.toFixed(1)} ms p99 ${lat[s].p99.toFixed(1)} ms`)
        .join(', ')}; new / baseline p50 ${(lat[1].p50 / lat[0].p50).toFixed(2)}×`,
    );
  } finally {
    for (const service of services) await service.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

/** The search test's text queries over the evaluation photos: recall@1 and @5, and the ranks. */
async function textQueries(
  photos: EvalPhoto[],
  search: (body: unknown) => Promise<{ hits?: Array<{ video_id: string }> }>,
  ids: Map<string, number>,
): Promise<string> {
  const wanted: Array<[string, string]> = [
    ['a bus', 'pexels_double_decker_bus.jpg'],
    ['people', 'person_multi_det.jpg'],
    ['a motorcycle', 'motorcycle_left.png'],
    ['a cup of coffee', 'coffee.png'],
    ['a cat', 'chelsea.png'],
  ];
  const ranks: number[] = [];
  for (const [query, photo] of wanted) {
    const { hits } = await search({ query, bucket_name: 'eval', kinds: ['frame'], top_k: 5 });
    ranks.push(hits!.map((hit) => photos[ids.get(hit.video_id) ?? -1]?.name).indexOf(photo) + 1);
  }
  const at = (k: number) => ranks.filter((r) => r >= 1 && r <= k).length / ranks.length;
  return `recall@1 ${f3(at(1))}, recall@5 ${f3(at(5))} (ranks ${ranks.map((r) => r || '>5').join(', ')})`;
}

/** Mirror image (left-right) of packed RGB. */
function mirrored(image: RgbImage): RgbImage {
  const { width, height, data } = image;
  const out = new Uint8Array(data.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const from = (y * width + (width - 1 - x)) * 3;
      out.set(data.subarray(from, from + 3), (y * width + x) * 3);
    }
  }
  return { data: out, width, height };
}

/** The central `share` of packed RGB. */
function centre(image: RgbImage, share: number): RgbImage {
  const w = Math.round(image.width * share);
  const h = Math.round(image.height * share);
  const left = Math.round((image.width - w) / 2);
  const top = Math.round((image.height - h) / 2);
  const out = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    const from = ((top + y) * image.width + left) * 3;
    out.set(image.data.subarray(from, from + w * 3), y * w * 3);
  }
  return { data: out, width: w, height: h };
}

/** The model outputs every idea is built from, for one image. */
interface Passes {
  plain: Float32Array;
  plainMirror: Float32Array;
  plainCentre: Float32Array;
  lowpass: Float32Array;
  lowpassMirror: Float32Array;
}

async function passes(embedder: ImageEmbedder, image: RgbImage): Promise<Passes> {
  const lowpass = imageDescriptor(embedder, 'lowpass-v2');
  const [plain, plainMirror, plainCentre] = await embedder.embed([image, mirrored(image), centre(image, 0.8)]);
  const [lp, lpMirror] = await lowpass.embed([image, mirrored(image)]);
  return { plain, plainMirror, plainCentre, lowpass: lp, lowpassMirror: lpMirror };
}

const sum = (a: Float32Array, b: Float32Array) => l2Normalize(a.map((v, i) => v + b[i]));
const minus = (a: Float32Array, b: Float32Array) => l2Normalize(a.map((v, i) => v - b[i]));
const signedRoot = (a: Float32Array) => l2Normalize(a.map((v) => Math.sign(v) * Math.sqrt(Math.abs(v))));
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i], 0);
const mean = (vectors: Float32Array[]) =>
  l2Normalize(vectors.reduce((acc, v) => acc.map((x, i) => x + v[i]), new Float32Array(vectors[0].length)));

/** Descriptor ideas, in-process, exact cosine ranking over the 32 originals. */
async function ideasPart(photos: EvalPhoto[], queries: Query[]): Promise<void> {
  const modelsDir = await ensureDefaultModels();
  const { platform } = loadDataprepConfig({ ARGUS_MODELS_DIR: modelsDir });
  const models = await loadModels({ ...platform, modelsDir, roles: ['imageEmbedder'] });
  try {
    const embedder = models.imageEmbedder;
    const originals: Passes[] = [];
    for (const photo of photos) originals.push(await passes(embedder, await decodeImage(photo.file)));
    const copies: Passes[] = [];
    for (const query of queries) copies.push(await passes(embedder, await decodeImage(query.jpeg)));
    const tuning = originals.filter((_, p) => photos[p].split === 'tuning');
    const hubOf = (pick: (x: Passes) => Float32Array) => mean(tuning.map(pick));
    const plainHub = hubOf((x) => x.plain);
    const lowpassHub = hubOf((x) => x.lowpass);
    const ideas: Array<{ name: string; passes: number; of: (x: Passes) => Float32Array }> = [
      { name: 'global-v1 (today)', passes: 1, of: (x) => x.plain },
      { name: 'global-v1 + mirror average', passes: 2, of: (x) => sum(x.plain, x.plainMirror) },
      { name: 'global-v1 + hub correction (tuning mean)', passes: 1, of: (x) => minus(x.plain, plainHub) },
      { name: 'global-v1 + power normalisation (√)', passes: 1, of: (x) => signedRoot(x.plain) },
      { name: 'global-v1 + multi-crop (full + centre 80 %)', passes: 2, of: (x) => sum(x.plain, x.plainCentre) },
      { name: 'lowpass-v2 (kept)', passes: 1, of: (x) => x.lowpass },
      { name: 'lowpass-v2 + mirror average', passes: 2, of: (x) => sum(x.lowpass, x.lowpassMirror) },
      { name: 'lowpass-v2 + hub correction', passes: 1, of: (x) => minus(x.lowpass, lowpassHub) },
      { name: 'lowpass-v2 + power normalisation (√)', passes: 1, of: (x) => signedRoot(x.lowpass) },
    ];
    console.log('\ndescriptor ideas, in-process (recall@1 / MRR):');
    console.log('| descriptor | model passes | tuning | held-out | held-out composite | held-out worst change | hub |');
    console.log('|---|---|---|---|---|---|---|');
    for (const idea of ideas) {
      const stored = originals.map(idea.of);
      const ranks = new Ranks();
      for (const [q, query] of queries.entries()) {
        const v = idea.of(copies[q]);
        const scores = stored.map((s) => dot(v, s));
        const own = scores[query.photo];
        const rank = 1 + scores.filter((s) => s > own).length;
        ranks.add(query, rank, scores.indexOf(Math.max(...scores)));
      }
      const worst = CHANGES.map((_, c) => ranks.of('held-out', c).r1);
      const w = worst.indexOf(Math.min(...worst));
      console.log(
        `| ${idea.name} | ${idea.passes} | ${fmt(ranks.of('tuning'))} | ${fmt(ranks.of('held-out'))} | ` +
          `${f3(ranks.of('held-out', COMPOSITE).r1)} | ${worst[w] < 1 ? `${CHANGES[w].name} ${f3(worst[w])}` : 'none below 1'} | ` +
          `${ranks.hub(photos)} |`,
      );
    }
  } finally {
    await models.release();
  }
}
