import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { fixtureImage } from '../../../test/support/fixtures.js';
import { makeTestVideo } from '../../../test/support/media.js';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { listen, type RunningServer } from '../../lib/http/index.js';
import { createLogger } from '../../lib/log/index.js';
import { LocalObjectStore } from '../../lib/storage/index.js';
import { LanceDbVectorStore, type VectorRecord, type VectorStore } from '../../lib/vectors/index.js';
import { createApp } from '../app.js';
import { loadDataprepConfig } from '../config.js';
import { TelemetryLog } from '../ingest/telemetry.js';
import { embedMedia } from '../pipeline/index.js';
import type { DataprepServices } from '../runtime/services.js';
import { ImageSpaces } from '../search/image-spaces.js';
import type { SearchHit } from '../search/search-query.js';
import { formFile, postForm, postJson } from '../testing/http-client.js';
import { testModels, TEST_LIMITS } from '../testing/harness.js';
import { reembedArchive } from './reembed-archive.js';

const logger = createLogger({ service: 'dataprep-test', level: 'error', json: true });
logger.silent = true;

const BUCKET = 'reembed';
const PHOTOS = ['chelsea.png', 'coffee.png', 'motorcycle_left.png'];

/** A phone-screenshot-like copy: central 80 % crop, mirrored, blurred σ 1.5, scaled to 70 %, as JPEG. */
async function changedCopy(photo: string): Promise<string> {
  const { width, height } = await sharp(fixtureImage(photo)).metadata();
  const w = Math.round(width! * 0.8);
  const h = Math.round(height! * 0.8);
  const cropped = await sharp(fixtureImage(photo))
    .extract({ left: Math.round((width! - w) / 2), top: Math.round((height! - h) / 2), width: w, height: h })
    .flop()
    .blur(1.5)
    .png()
    .toBuffer();
  const jpeg = await sharp(cropped)
    .resize(Math.round(w * 0.7))
    .jpeg({ quality: 90 })
    .toBuffer();
  return jpeg.toString('base64');
}

/**
 * Re-embedding an archive into the current image descriptor (issue 29): media ingested by a service writing
 * `global-v1` vectors are converted by reembedArchive through the real pipeline, models and LanceDB; a video whose
 * conversion fails half-way keeps its old vectors, and search finds it meanwhile through the old space.
 */
describe('reembedArchive', () => {
  let dataDir: string;
  let store: LanceDbVectorStore;
  const stores: VectorStore[] = [];
  const servers: RunningServer[] = [];
  let oldBase: string;
  let newBase: string;
  let services: DataprepServices;
  /** Set by a test: an insert of the new descriptor's records of this video fails after its first one. */
  let failVideo: string | undefined;
  /** Set by a test: the store lists failVideo's records before any other (a ranking the probe may well give). */
  let failedFirst = false;
  const ids = new Map<string, string>();

  /** The video's image records: their descriptor and run. */
  const recordsOf = async (videoId: string) => {
    const probe = new Float32Array(store.dimension).fill(1 / Math.sqrt(store.dimension));
    const hits = await store.search(probe, 1000, { equals: { bucket_name: BUCKET, video_id: videoId } });
    return hits.map((hit) => ({ id: hit.id, descriptor: hit.metadata.image_descriptor, run: hit.metadata.run_id }));
  };

  const searchImage = async (base: string, imageBase64: string): Promise<SearchHit[]> => {
    const res = await postJson(`${base}/search`, { image_base64: imageBase64, bucket_name: BUCKET, kinds: ['frame'] });
    expect(res.status).toBe(200);
    return (await res.json()).hits;
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'dataprep-reembed-'));
    const models = await testModels();
    const vectorsDir = path.join(dataDir, 'vectors');
    store = await LanceDbVectorStore.open({
      dir: vectorsDir,
      table: 'frames',
      dimension: models.imageEmbedder.dimension,
    });
    const textStore = await LanceDbVectorStore.open({
      dir: vectorsDir,
      table: 'summaries',
      dimension: models.textEmbedder.dimension,
    });
    const descriptionStore = await LanceDbVectorStore.open({
      dir: vectorsDir,
      table: 'descriptions',
      dimension: models.textEmbedder.dimension,
    });
    stores.push(store, textStore, descriptionStore);
    let failedInserts = 0;
    const watched: VectorStore = Object.create(store) as VectorStore;
    watched.insert = async (records: VectorRecord[]) => {
      const victim = records.some(
        (r) => r.metadata.video_id === failVideo && r.metadata.image_descriptor === 'lowpass-v2',
      );
      if (victim && failedInserts++ > 0) throw new Error('vector database went away');
      return store.insert(records);
    };
    watched.search = async (vector, k, filter) => {
      if (!failedFirst) return store.search(vector, k, filter);
      const hits = await store.search(vector, k + 1000, filter);
      const first = (hit: { metadata: Record<string, unknown> }) => (hit.metadata.video_id === failVideo ? 0 : 1);
      return hits.sort((a, b) => first(a) - first(b)).slice(0, k);
    };
    const objectStore = new LocalObjectStore(path.join(dataDir, 'media'));
    const start = async (descriptor: string) => {
      const config = loadDataprepConfig({
        ARGUS_DATA_DIR: dataDir,
        ARGUS_MODELS_DIR: await ensureDefaultModels(),
        MM_DATAPREP_IMAGE_DESCRIPTOR: descriptor,
      });
      const pipelineDeps = {
        imageEmbedder: models.imageEmbedder,
        imageDescriptor: config.imageDescriptor,
        detector: models.detector,
        vectors: watched,
        descriptions: { textEmbedder: models.textEmbedder, store: descriptionStore },
        logger,
      };
      const created = createApp({
        config,
        logger,
        objectStore,
        vectorStore: watched,
        textVectorStore: textStore,
        descriptionStore,
        models,
        // Small batches: a video's run writes in several inserts, so it can fail after its first one.
        embedMedia: (request) => embedMedia(pipelineDeps, request, { embedBatchSize: 2, writeBatchSize: 2 }),
        telemetry: await TelemetryLog.open({ maxRecords: 20 }),
        limits: TEST_LIMITS,
      });
      const server = await listen(created.app, { port: 0, host: '127.0.0.1', logger, name: 'dataprep-reembed-test' });
      servers.push(server);
      return { base: `${server.url}/v1/dataprep`, services: created.services };
    };
    // The archive as the service before this descriptor wrote it, searched by the service after it.
    oldBase = (await start('global-v1')).base;
    ({ base: newBase, services } = await start('lowpass-v2'));
    for (const photo of PHOTOS) {
      const tags = photo === 'chelsea.png' ? '&tags=pets' : '';
      const res = await postForm(
        `${oldBase}/media/upload?bucket_name=${BUCKET}${tags}`,
        await formFile(fixtureImage(photo)),
      );
      expect(res.status).toBe(201);
      ids.set(photo, (await res.json()).video_id);
    }
    const video = await makeTestVideo({ seconds: 2, fps: 10, width: 160, height: 120 });
    const res = await postForm(
      `${oldBase}/media/upload?bucket_name=${BUCKET}&frame_interval=2&enable_object_detection=false`,
      await formFile(video, 'clip.mp4', 'video/mp4'),
    );
    expect(res.status).toBe(201);
    ids.set('clip.mp4', (await res.json()).video_id);
  }, 120_000);

  afterAll(async () => {
    for (const server of servers) await server.close();
    for (const s of stores) await s.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('finds the original of a changed copy while the archive is still in the old space', async () => {
    expect(await new ImageSpaces(store, services.models.imageEmbedder).others()).toEqual(['global-v1']);
    for (const photo of PHOTOS) {
      const [top] = await searchImage(newBase, await changedCopy(photo));
      expect(top.video_id).toBe(ids.get(photo));
    }
  });

  it('converts every video but one whose new vectors fail half-way: that one keeps its old vectors, still found', async () => {
    const clip = ids.get('clip.mp4')!;
    const before = await recordsOf(clip);
    expect(before).toHaveLength(10);
    expect(before.every((r) => r.descriptor === 'global-v1')).toBe(true);
    failVideo = clip;
    const report = await reembedArchive(services);
    failVideo = undefined;
    expect(report.failed).toEqual([
      { bucketName: BUCKET, videoId: clip, error: expect.stringContaining('vector database went away') },
    ]);
    expect(report.converted.map((v) => v.videoId).sort()).toEqual(PHOTOS.map((p) => ids.get(p)).sort());
    expect(report.remaining).toBe(10);
    expect((await recordsOf(clip)).sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      before.sort((a, b) => a.id.localeCompare(b.id)),
    );
    for (const photo of PHOTOS) {
      const records = await recordsOf(ids.get(photo)!);
      expect(records.length).toBeGreaterThan(0);
      expect(records.every((r) => r.descriptor === 'lowpass-v2')).toBe(true);
      const [top] = await searchImage(newBase, await changedCopy(photo));
      expect(top.video_id).toBe(ids.get(photo));
    }
  });

  it('reads past a failed video holding more stale records than a page to the videos after it', async () => {
    const res = await postForm(
      `${oldBase}/media/upload?bucket_name=${BUCKET}`,
      await formFile(fixtureImage('rocket.jpg')),
    );
    expect(res.status).toBe(201);
    const rocket = (await res.json()).video_id;
    const clip = ids.get('clip.mp4')!;
    failVideo = clip;
    failedFirst = true;
    const report = await reembedArchive(services, { round: 2 });
    failVideo = undefined;
    failedFirst = false;
    expect(report.converted).toEqual([{ bucketName: BUCKET, videoId: rocket }]);
    expect(report.failed).toEqual([{ bucketName: BUCKET, videoId: clip, error: expect.any(String) }]);
    expect(report.remaining).toBe(10);
  });

  it('keeps what the media was ingested with: tags, detection, frame interval', async () => {
    const probe = new Float32Array(store.dimension).fill(1 / Math.sqrt(store.dimension));
    const [cat] = await store.search(probe, 1, {
      equals: { video_id: ids.get('chelsea.png')! },
      in: { kind: ['image'] },
    });
    expect(cat.metadata).toMatchObject({ tags: ['pets'], labels: expect.any(Array), image_descriptor: 'lowpass-v2' });
  });

  it('converts the failed video when run again, leaving the archive in one space', async () => {
    const report = await reembedArchive(services);
    expect(report).toMatchObject({ failed: [], remaining: 0, converted: [{ videoId: ids.get('clip.mp4') }] });
    const records = await recordsOf(ids.get('clip.mp4')!);
    expect(records).toHaveLength(10);
    expect(records.every((r) => r.descriptor === 'lowpass-v2')).toBe(true);
    expect(await new ImageSpaces(store, services.models.imageEmbedder).others()).toEqual([]);
    expect(await reembedArchive(services)).toMatchObject({ converted: [], failed: [], remaining: 0 });
  });
});
