/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadModels, type LoadedModels, type ModelCallOptions } from '../../lib/inference/index.js';
import { VideoProbeError } from '../../lib/media/probe-video.js';
import { LanceDbVectorStore } from '../../lib/vectors/lancedb-store.js';
import type { VectorHit, VectorRecord, VectorStore } from '../../lib/vectors/vector-store.js';
import { fixtureImage, makeCorruptMp4, makeTestVideo, removeTestMediaCache } from '../../../test/support/media.js';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { embedMedia } from './embed-media.js';
import type { EmbedMediaDeps, EmbedMediaRequest } from './embed-request.js';
import { CANONICAL_METADATA_KEYS, ReservedMetadataKeyError } from './metadata.js';

const BUS = fixtureImage('pexels_double_decker_bus.jpg');
const silent = { info: () => undefined, warn: () => undefined, debug: () => undefined };

let models: LoadedModels;
let dbDir: string;
let store: LanceDbVectorStore;
let busVideo: string;

beforeAll(async () => {
  models = await loadModels({ modelsDir: await ensureDefaultModels(), provider: 'cpu', threads: 0 });
  dbDir = await mkdtemp(path.join(os.tmpdir(), 'argus-pipeline-'));
  store = await LanceDbVectorStore.open({ dir: dbDir, table: 'embeddings', dimension: models.imageEmbedder.dimension });
  // 2 s at 10 fps of the panned bus photo: 20 frames, objects visible in each.
  busVideo = await makeTestVideo({ seconds: 2, fps: 10, width: 480, height: 320, source: BUS });
});

afterAll(async () => {
  await store?.close();
  await models?.release();
  await rm(dbDir, { recursive: true, force: true });
  await removeTestMediaCache();
});

function deps(vectors: VectorStore = store): EmbedMediaDeps {
  return { imageEmbedder: models.imageEmbedder, detector: models.detector, vectors, logger: silent };
}

function request(overrides: Partial<EmbedMediaRequest>): EmbedMediaRequest {
  return {
    localPath: busVideo,
    kind: 'video',
    bucketName: 'pipeline-test',
    videoId: 'v1',
    filename: 'bus.mp4',
    frameInterval: 5,
    detection: { enabled: true, confidence: 0.3 },
    tags: ['street', 'london'],
    videoUrl: 'http://127.0.0.1/v1/dataprep/media/download?video_id=v1',
    uploadedAt: '2025-01-02T03:04:05.000Z',
    ...overrides,
  };
}

/** Every stored record of one video, with metadata (search with a filter and a k larger than the video holds). */
async function storedRecords(videoId: string, vectors: VectorStore = store): Promise<VectorHit[]> {
  const probe = new Float32Array(models.imageEmbedder.dimension).fill(1 / Math.sqrt(models.imageEmbedder.dimension));
  return vectors.search(probe, 1000, { equals: { bucket_name: 'pipeline-test', video_id: videoId } });
}

const FRAME_KEYS = CANONICAL_METADATA_KEYS.filter(
  (key) =>
    ![
      'label',
      'bbox',
      'crop_id',
      'score',
      'parent_frame_id',
      'source_path',
      'video_start_time',
      'video_end_time',
      'summary',
      'description',
      'positions',
    ].includes(key),
);
const CROP_KEYS = [
  ...FRAME_KEYS.filter((key) => key !== 'labels'),
  'label',
  'bbox',
  'crop_id',
  'score',
  'parent_frame_id',
];

describe('embedMedia', () => {
  it('embeds an image and each detected object crop, with full metadata', async () => {
    const result = await embedMedia(
      deps(),
      request({
        localPath: BUS,
        kind: 'image',
        videoId: 'img1',
        filename: 'bus.jpg',
        extraMetadata: { camera: 'north-gate', floor: 2 },
      }),
    );
    const hits = await storedRecords('img1');
    expect(hits).toHaveLength(result.embeddingsStored);
    expect(result.framesExtracted).toBe(1);
    expect(result.itemsAfterDetection).toBe(1 + result.cropsDetected);
    expect(result.embeddingsStored).toBe(result.itemsAfterDetection);

    const image = hits.filter((hit) => hit.metadata.kind === 'image');
    expect(image).toHaveLength(1);
    expect(Object.keys(image[0].metadata).sort()).toEqual([...FRAME_KEYS, 'camera', 'floor'].sort());
    expect(image[0].metadata).toMatchObject({
      video_id: 'img1',
      bucket_name: 'pipeline-test',
      video_name: 'bus.jpg',
      filename: 'bus.jpg',
      frame_id: 0,
      timestamp: 0,
      frame_interval: 1,
      fps: 0,
      total_frames: 1,
      video_duration_seconds: 0,
      tags: ['street', 'london'],
      upload_time: '2025-01-02T03:04:05.000Z',
      media_type: 'image',
      camera: 'north-gate',
      floor: 2,
    });
    expect(Date.parse(String(image[0].metadata.creation_time))).not.toBeNaN();
    // One run id (a fresh UUID when the caller names none) on every embedding of the run.
    expect([...new Set(hits.map((hit) => hit.metadata.run_id))]).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/)]);

    const crops = hits.filter((hit) => hit.metadata.kind === 'crop');
    const labels = new Set(crops.map((hit) => hit.metadata.label));
    expect(labels).toContain('bus');
    expect(labels).toContain('person');
    for (const crop of crops) {
      expect(Object.keys(crop.metadata).sort()).toEqual([...CROP_KEYS, 'camera', 'floor'].sort());
      const [x1, y1, x2, y2] = crop.metadata.bbox as number[];
      expect(x2).toBeGreaterThan(x1);
      expect(y2).toBeGreaterThan(y1);
      expect(crop.metadata.score).toBeGreaterThanOrEqual(0.3);
      expect(crop.metadata.parent_frame_id).toBe(0);
    }
    // Crops are separate embeddings, not copies of the whole image's vector.
    const bus = crops.find((hit) => hit.metadata.label === 'bus')!;
    const [nearestToImage] = await store.search(
      (await models.imageEmbedder.embed([await (await import('../../lib/media/image-decode.js')).decodeImage(BUS)]))[0],
      1,
      { equals: { video_id: 'img1' } },
    );
    expect(nearestToImage.metadata.kind).toBe('image');
    expect(bus.id).not.toBe(nearestToImage.id);
  });

  it('embeds every Nth frame of a video plus its crops, and reports stage figures', async () => {
    const result = await embedMedia(deps(), request({ videoId: 'v1' }));
    expect(result.video).toEqual({ fps: 10, totalFrames: 20, durationSeconds: 2 });
    expect(result.framesExtracted).toBe(4);
    expect(result.cropsDetected).toBeGreaterThanOrEqual(4);
    expect(result.embeddingsStored).toBe(4 + result.cropsDetected);

    const hits = await storedRecords('v1');
    expect(hits).toHaveLength(result.embeddingsStored);
    const frames = hits.filter((hit) => hit.metadata.kind === 'frame').map((hit) => hit.metadata);
    expect(frames.map((m) => m.frame_id).sort((a, b) => Number(a) - Number(b))).toEqual([0, 5, 10, 15]);
    for (const m of frames) {
      expect(m.timestamp).toBeCloseTo(Number(m.frame_id) / 10, 6);
      expect(m).toMatchObject({ media_type: 'video', frame_interval: 5, fps: 10, total_frames: 20 });
      expect(m.video_duration_seconds).toBe(2);
      expect(Object.keys(m).sort()).toEqual([...FRAME_KEYS].sort());
    }
    const crops = hits.filter((hit) => hit.metadata.kind === 'crop').map((hit) => hit.metadata);
    expect(crops.some((m) => m.label === 'bus')).toBe(true);
    for (const m of crops) {
      expect([0, 5, 10, 15]).toContain(m.parent_frame_id);
      expect(m.frame_id).toBe(m.parent_frame_id);
      expect(m.timestamp).toBeCloseTo(Number(m.frame_id) / 10, 6);
    }
    // Ids are unique per item.
    expect(new Set(hits.map((hit) => hit.id)).size).toBe(hits.length);

    expect(result.batches.reduce((sum, batch) => sum + batch.items, 0)).toBe(result.itemsAfterDetection);
    expect(result.pipelineStats.write_batches).toBeGreaterThanOrEqual(1);
    for (const key of ['decode_s', 'detect_s', 'embed_s', 'write_s', 'wall_s'] as const) {
      expect(result.stages[key]).toBeGreaterThan(0);
    }
    expect(result.throughput.frames_per_s).toBeGreaterThan(0);
  });

  it('with worker-hosted sessions, runs one model at a time and prepares the next input meanwhile', async () => {
    const workerModels = await loadModels({
      modelsDir: await ensureDefaultModels(),
      provider: 'cpu',
      threads: 1,
      isolation: 'worker',
    });
    try {
      let running = 0;
      let mostRunning = 0;
      let callsStartedDuringARun = 0;
      // Wraps the pipeline's gate to watch the runs it admits, and notes each call begun while a run is in progress.
      const watch = (options?: ModelCallOptions): ModelCallOptions => {
        if (running > 0) callsStartedDuringARun++;
        const gate = options?.gate;
        if (!gate) throw new Error('the pipeline passed no gate');
        return {
          gate: (run) =>
            gate(async () => {
              mostRunning = Math.max(mostRunning, ++running);
              try {
                return await run();
              } finally {
                running--;
              }
            }),
        };
      };
      const watched: EmbedMediaDeps = {
        ...deps(),
        detector: {
          info: workerModels.detector.info,
          detect: (image, minScore, options) => workerModels.detector.detect(image, minScore, watch(options)),
        },
        imageEmbedder: {
          info: workerModels.imageEmbedder.info,
          dimension: workerModels.imageEmbedder.dimension,
          embed: (images, options) => workerModels.imageEmbedder.embed(images, watch(options)),
        },
      };
      const result = await embedMedia(watched, request({ videoId: 'overlap', frameInterval: 2 }));
      expect(result.framesExtracted).toBe(10);
      expect(result.embeddingsStored).toBe(10 + result.cropsDetected);
      expect(await storedRecords('overlap')).toHaveLength(result.embeddingsStored);
      expect(mostRunning).toBe(1);
      expect(callsStartedDuringARun).toBeGreaterThan(0);
      expect(result.pipelineStats.model_run_s).toBeGreaterThan(0);
      expect(result.pipelineStats.model_run_s).toBeLessThanOrEqual(result.stages.wall_s);
    } finally {
      await workerModels.release();
    }
  });

  it('decodes large frames downscaled but reports crop boxes in source pixels', async () => {
    const result = await embedMedia(deps(), request({ videoId: 'downscaled', frameInterval: 10 }), {
      maxFrameSide: 240,
    });
    expect(result.framesExtracted).toBe(2);
    const crops = (await storedRecords('downscaled')).filter((hit) => hit.metadata.kind === 'crop');
    expect(crops.length).toBeGreaterThan(0);
    const boxes = crops.map((hit) => hit.metadata.bbox as number[]);
    // Decoded frames are 240×160; the source is 480×320.
    expect(Math.max(...boxes.map((box) => box[2]))).toBeGreaterThan(240);
    for (const [x1, y1, x2, y2] of boxes) {
      expect(x1).toBeGreaterThanOrEqual(0);
      expect(y1).toBeGreaterThanOrEqual(0);
      expect(x2).toBeLessThanOrEqual(480);
      expect(y2).toBeLessThanOrEqual(320);
    }
  });

  it('embeds frames only when detection is off', async () => {
    const result = await embedMedia(
      deps(),
      request({ videoId: 'nodetect', frameInterval: 7, detection: { enabled: false, confidence: 0.3 } }),
    );
    expect(result).toMatchObject({ framesExtracted: 3, cropsDetected: 0, embeddingsStored: 3 });
    const hits = await storedRecords('nodetect');
    expect(hits.map((hit) => hit.metadata.frame_id).sort((a, b) => Number(a) - Number(b))).toEqual([0, 7, 14]);
    expect(result.stages.detect_s).toBe(0);
    for (const hit of hits) expect(hit.metadata.labels).toBeUndefined();
  });

  it('describes each frame and crop in words and stores the descriptions, embedded once per distinct text', async () => {
    const descriptions = await LanceDbVectorStore.open({
      dir: dbDir,
      table: 'descriptions',
      dimension: models.textEmbedder.dimension,
    });
    const embedded: string[] = [];
    const textEmbedder = {
      info: models.textEmbedder.info,
      dimension: models.textEmbedder.dimension,
      embed: (texts: string[]) => {
        embedded.push(...texts);
        return models.textEmbedder.embed(texts);
      },
    };
    // The default crop confidence: descriptions still name what scores 0.4 or more.
    const result = await embedMedia(
      { ...deps(), descriptions: { textEmbedder, store: descriptions } },
      request({ videoId: 'described', detection: { enabled: true, confidence: 0.85 } }),
    );
    const probe = new Float32Array(models.textEmbedder.dimension).fill(1 / Math.sqrt(models.textEmbedder.dimension));
    const stored = await descriptions.search(probe, 1000, { equals: { video_id: 'described' } });
    const frames = stored.filter((hit) => hit.metadata.kind === 'frame');
    const crops = stored.filter((hit) => hit.metadata.kind === 'crop');
    expect(frames).toHaveLength(result.framesExtracted);
    expect(crops).toHaveLength(result.cropsDetected);
    for (const { metadata } of frames) {
      expect(metadata.description).toMatch(/\ba bus\b/);
      expect(metadata.labels).toContain('bus');
      expect(metadata.positions).toEqual(expect.arrayContaining([expect.stringMatching(/^bus@(left|centre|right)$/)]));
    }
    for (const { metadata } of crops) expect(metadata.description).toMatch(/^an? [a-z ]+ (on the|in the)/);
    // The image store's frames carry the same labels, for the labels filter.
    const images = await storedRecords('described');
    for (const hit of images.filter((h) => h.metadata.kind === 'frame')) expect(hit.metadata.labels).toContain('bus');
    expect(embedded.length).toBe(new Set(embedded).size);
    expect(new Set(embedded)).toEqual(new Set(stored.map((hit) => hit.metadata.description)));
    await descriptions.close();
  });

  it('removes the descriptions of a failed run with its vectors', async () => {
    const descriptions = await LanceDbVectorStore.open({
      dir: dbDir,
      table: 'descriptions-rollback',
      dimension: models.textEmbedder.dimension,
    });
    let inserts = 0;
    const flaky: VectorStore = Object.create(store) as VectorStore;
    flaky.insert = async (records: VectorRecord[]) => {
      if (++inserts === 2) throw new Error('disk full');
      return store.insert(records);
    };
    const run = embedMedia(
      { ...deps(flaky), descriptions: { textEmbedder: models.textEmbedder, store: descriptions } },
      request({ videoId: 'described-rollback', frameInterval: 2, runId: 'failing-run' }),
      { embedBatchSize: 4, writeBatchSize: 4 },
    );
    await expect(run).rejects.toThrow('disk full');
    expect(await descriptions.count({ equals: { video_id: 'described-rollback' } })).toBe(0);
    expect(await store.count({ equals: { video_id: 'described-rollback' } })).toBe(0);
    await descriptions.close();
  });

  it('removes what its run wrote, and only that, when a vector-store insert fails midway', async () => {
    // A real LanceDB store whose second insert fails, as a database dropping out mid-run would.
    const failing = await LanceDbVectorStore.open({
      dir: path.join(dbDir, 'failing'),
      table: 'embeddings',
      dimension: models.imageEmbedder.dimension,
    });
    const earlierRun = other('rollback');
    earlierRun.metadata.run_id = 'earlier-run';
    await failing.insert([other('keep-me'), earlierRun]);
    let inserts = 0;
    const flaky: VectorStore = {
      backend: failing.backend,
      insert: async (records) => {
        if (++inserts === 2) throw new Error('disk full');
        return failing.insert(records);
      },
      search: (...args) => failing.search(...args),
      delete: (filter) => failing.delete(filter),
      count: (filter) => failing.count(filter),
      health: () => failing.health(),
      close: () => failing.close(),
    };
    const run = embedMedia(deps(flaky), request({ videoId: 'rollback', frameInterval: 2, runId: 'failing-run' }), {
      embedBatchSize: 4,
      writeBatchSize: 4,
    });
    await expect(run).rejects.toThrow('disk full');
    expect(inserts).toBe(2);
    expect(await failing.count({ equals: { video_id: 'rollback', run_id: 'failing-run' } })).toBe(0);
    expect(await failing.count({ equals: { video_id: 'rollback' } })).toBe(1);
    expect(await failing.count({ equals: { video_id: 'rollback', run_id: 'earlier-run' } })).toBe(1);
    expect(await failing.count({ equals: { video_id: 'keep-me' } })).toBe(1);
    await failing.close();
  });

  it('stops on abort, removes partial vectors and rethrows the abort reason', async () => {
    const controller = new AbortController();
    let inserted = 0;
    const watching: VectorStore = Object.create(store) as VectorStore;
    watching.insert = async (records: VectorRecord[]) => {
      await store.insert(records);
      inserted += records.length;
      controller.abort(new Error('cancelled by user'));
    };
    const run = embedMedia(
      deps(watching),
      request({ videoId: 'aborted', frameInterval: 1, signal: controller.signal }),
      { embedBatchSize: 2, writeBatchSize: 2 },
    );
    await expect(run).rejects.toThrow('cancelled by user');
    expect(inserted).toBeGreaterThan(0);
    expect(await store.count({ equals: { video_id: 'aborted' } })).toBe(0);
  });

  it('rejects reserved metadata keys and unreadable videos before writing anything', async () => {
    await expect(embedMedia(deps(), request({ videoId: 'bad', extraMetadata: { Video_ID: 'x' } }))).rejects.toThrow(
      ReservedMetadataKeyError,
    );
    await expect(embedMedia(deps(), request({ videoId: 'bad', localPath: await makeCorruptMp4() }))).rejects.toThrow(
      VideoProbeError,
    );
    expect(await store.count({ equals: { video_id: 'bad' } })).toBe(0);
  });
});

function other(videoId: string): VectorRecord {
  const vector = new Float32Array(models.imageEmbedder.dimension);
  vector[0] = 1;
  return { id: `${videoId}-0`, vector, metadata: { bucket_name: 'pipeline-test', video_id: videoId, tags: [] } };
}
