import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { FIXTURE_PHOTOS, fixtureImage } from '../../../test/support/fixtures.js';
import { LocalObjectStore } from '../../lib/storage/index.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { formFile, postForm, postJson } from '../testing/http-client.js';
import {
  makeSlideshow,
  photoVariations,
  SLIDESHOW_SECONDS_PER_PHOTO,
  type PhotoVariation,
} from '../testing/search-fixtures.js';
import type { SearchHit } from './search-query.js';

let dir: string;
let h: Harness;
/** video_id of each fixture photo ingested as an image. */
const photoIds = new Map<string, string>();
let slideshowId: string;
const BUCKET = 'search-eval';

/** The photo a hit shows: the image item itself, or the slideshow frame showing it. */
function photoOf(hit: SearchHit): string | undefined {
  if (hit.video_id === slideshowId) return FIXTURE_PHOTOS[Math.floor(hit.timestamp / SLIDESHOW_SECONDS_PER_PHOTO)];
  return [...photoIds.entries()].find(([, id]) => id === hit.video_id)?.[0];
}

async function search(body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await postJson(`${h.base}/search`, body);
  return { status: res.status, body: await res.json() };
}

async function hits(body: Record<string, unknown>): Promise<SearchHit[]> {
  const res = await search({ bucket_name: BUCKET, ...body });
  expect(res.status).toBe(200);
  return res.body.hits;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dataprep-search-'));
  h = await startHarness(new LocalObjectStore(path.join(dir, 'media')));
  for (const photo of FIXTURE_PHOTOS) {
    const res = await postForm(
      `${h.base}/media/upload?bucket_name=${BUCKET}&tags=photo&tags=${photo.replace(/\..*$/, '')}`,
      await formFile(fixtureImage(photo)),
    );
    expect(res.status).toBe(201);
    photoIds.set(photo, (await res.json()).video_id);
  }
  // One frame per second: two near-identical frames of each photo.
  const res = await postForm(
    `${h.base}/media/upload?bucket_name=${BUCKET}&frame_interval=5&tags=slideshow`,
    await formFile(await makeSlideshow(dir), 'slideshow.mp4', 'video/mp4'),
  );
  expect(res.status).toBe(201);
  slideshowId = (await res.json()).video_id;
}, 120_000);

afterAll(async () => {
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('search quality on the labelled evaluation set', () => {
  it('image → image: every variation (crop, flip, blur, brightness, scale) finds its original at rank 1', async () => {
    const variations: PhotoVariation[] = (await Promise.all(FIXTURE_PHOTOS.map((p) => photoVariations(p)))).flat();
    const ranks: Array<{ query: string; rank: number }> = [];
    for (const variation of variations) {
      const found = await hits({ image_base64: variation.jpeg.toString('base64'), kinds: ['frame'], top_k: 5 });
      const rank = found.findIndex((hit) => photoOf(hit) === variation.photo) + 1;
      ranks.push({ query: `${variation.photo} ${variation.change}`, rank });
    }
    report('image → image', ranks);
    expect(ranks.filter((r) => r.rank !== 1)).toEqual([]);
  });

  it('text → image: the photo a query names is in the top 5', async () => {
    const queries: Array<[string, string]> = [
      ['a bus', 'pexels_double_decker_bus.jpg'],
      ['people', 'person_multi_det.jpg'],
      ['a motorcycle', 'motorcycle_left.png'],
      ['a cup of coffee', 'coffee.png'],
      ['a cat', 'chelsea.png'],
    ];
    const ranks: Array<{ query: string; rank: number }> = [];
    for (const [query, photo] of queries) {
      const found = await hits({ query, kinds: ['frame'], top_k: 5 });
      ranks.push({ query, rank: found.findIndex((hit) => photoOf(hit) === photo) + 1 });
    }
    report('text → image', ranks);
    expect(ranks.filter((r) => r.rank === 0)).toEqual([]);
  });
});

/** Prints recall@1 and recall@5 of a query set (the README quotes these lines). */
function report(what: string, ranks: Array<{ query: string; rank: number }>): void {
  const at = (k: number) => ranks.filter((r) => r.rank >= 1 && r.rank <= k).length / ranks.length;
  const misses = ranks.filter((r) => r.rank !== 1).map((r) => `${r.query}: ${r.rank || '>5'}`);
  console.log(
    `${what}: ${ranks.length} queries, recall@1 ${at(1).toFixed(3)}, recall@5 ${at(5).toFixed(3)}` +
      (misses.length ? ` (not first: ${misses.join('; ')})` : ''),
  );
}

describe('POST /search', () => {
  it('answers hits with the fields of the issue: links to the moment, tags, labels, user metadata', async () => {
    const [hit] = await hits({ query: 'a bus', kinds: ['frame'], top_k: 1 });
    expect(hit).toMatchObject({ bucket_name: BUCKET, kind: 'frame', tags: expect.any(Array), metadata: {} });
    expect(hit.labels).toContain('bus');
    expect(hit.description).toMatch(/bus/);
    const thumbnail = await fetch(`${h.url}${hit.thumbnail_url}`);
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers.get('content-type')).toBe('image/jpeg');
    const [video] = await hits({ query: 'a bus', video_ids: [slideshowId], top_k: 1 });
    expect(video.video_url).toBe(
      `/v1/dataprep/media/download?bucket_name=${BUCKET}&video_id=${slideshowId}#t=${video.timestamp}`,
    );
    expect((await fetch(`${h.url}${video.video_url.replace(/#.*/, '')}`)).status).toBe(200);
  });

  it('says which mode answers text, in /health and in the OpenAPI document', async () => {
    const health = await (await fetch(`${h.base}/health`)).json();
    expect(health.search_mode).toBe('descriptions');
    const doc = await (await fetch(`${h.url}/openapi.json`)).json();
    expect(doc.info.description).toContain('"descriptions" mode');
    expect(doc.paths['/v1/dataprep/search'].post.requestBody).toBeDefined();
    const { body } = await search({ query: 'two people on the left', top_k: 1 });
    expect(body).toMatchObject({ status: 'success', mode: 'descriptions', labels: ['person'], position: 'left' });
  });

  it('finds object hits with their class and box, and summaries by their words', async () => {
    const objects = await hits({ query: 'a bus', kinds: ['object'], top_k: 3 });
    expect(objects[0]).toMatchObject({ kind: 'object', label: 'bus', bbox: expect.any(Array) });
    expect(objects[0].bbox).toHaveLength(4);
    const summary = await postJson(`${h.base}/summary`, {
      bucket_name: BUCKET,
      video_id: slideshowId,
      video_summary: 'A red double-decker bus drives through London.',
      video_start_time: 0,
      video_end_time: 2,
    });
    expect(summary.status).toBe(201);
    const [top] = await hits({ query: 'double-decker in London', kinds: ['summary'], top_k: 1 });
    expect(top).toMatchObject({ kind: 'summary', video_id: slideshowId, from_seconds: 0, to_seconds: 2 });
  });

  it('filters by videos, tags (any, all), labels, position in the video, ingest time and kinds', async () => {
    const inVideo = await hits({ query: 'a bus', video_ids: [slideshowId], top_k: 50 });
    expect(inVideo.length).toBeGreaterThan(0);
    expect(inVideo.every((hit) => hit.video_id === slideshowId)).toBe(true);
    const tagged = await hits({ query: 'people', tags: ['coffee', 'chelsea'], tags_match: 'any', top_k: 50 });
    expect(new Set(tagged.map((hit) => photoOf(hit)))).toEqual(new Set(['coffee.png', 'chelsea.png']));
    expect(await hits({ query: 'people', tags: ['photo', 'coffee'], tags_match: 'all', top_k: 50 })).toEqual([
      expect.objectContaining({ video_id: photoIds.get('coffee.png') }),
    ]);
    const withPeople = await hits({ query: 'a street', labels: ['person'], kinds: ['frame'], top_k: 50 });
    expect(withPeople.length).toBeGreaterThan(0);
    expect(withPeople.every((hit) => hit.labels?.includes('person'))).toBe(true);
    const both = await hits({
      image_base64: await base64Of('pexels_double_decker_bus.jpg'),
      labels: ['bus', 'person'],
      labels_match: 'all',
      top_k: 50,
    });
    expect(both.length).toBeGreaterThan(0);
    expect(both.every((hit) => hit.labels?.includes('bus') && hit.labels.includes('person'))).toBe(true);
    const span = await hits({ query: 'a bus', video_ids: [slideshowId], from_seconds: 4, to_seconds: 7.5, top_k: 50 });
    expect(span.length).toBeGreaterThan(0);
    expect(span.every((hit) => hit.timestamp >= 4 && hit.timestamp <= 7.5)).toBe(true);
    const now = new Date();
    expect(await hits({ query: 'a bus', ingested_after: new Date(now.getTime() + 60_000).toISOString() })).toEqual([]);
    expect(
      (await hits({ query: 'a bus', ingested_before: now.toISOString(), ingested_after: '2020-01-01T00:00:00Z' }))
        .length,
    ).toBeGreaterThan(0);
    const framesOnly = await hits({ query: 'a bus', kinds: ['frame'], top_k: 100 });
    expect(framesOnly.every((hit) => hit.kind === 'frame')).toBe(true);
  });

  it('filters user metadata of directory ingests by equality and by a list of values', async () => {
    // Records as a directory ingest writes them: user keys top level beside the canonical ones.
    const [vector] = await h.services.models.textEmbedder.embed(['a bus; the bus in the centre, large']);
    const record = (id: string, camera: string, floor: number) => ({
      id,
      vector,
      metadata: {
        bucket_name: BUCKET,
        video_id: `meta-${camera}`,
        kind: 'image',
        media_type: 'image',
        timestamp: 0,
        frame_id: 0,
        tags: [],
        labels: ['bus'],
        description: 'a bus; the bus in the centre, large',
        camera,
        floor,
      },
    });
    await h.descriptionStore.insert([
      record('00000000-0000-5000-8000-000000000001', 'north', 1),
      record('00000000-0000-5000-8000-000000000002', 'south', 2),
    ]);
    const north = await hits({ query: 'a bus', metadata: { camera: 'north' }, top_k: 50 });
    expect(north.map((hit) => hit.video_id)).toEqual(['meta-north']);
    expect(north[0].metadata).toEqual({ camera: 'north', floor: 1 });
    const floors = await hits({ query: 'a bus', metadata: { floor: [1, 2] }, top_k: 50 });
    expect(floors.map((hit) => hit.video_id).sort()).toEqual(['meta-north', 'meta-south']);
    await h.descriptionStore.delete({ in: { video_id: ['meta-north', 'meta-south'] } });
  });

  it('groups by video and collapses near-identical consecutive frames into one hit with a span', async () => {
    const grouped = await hits({ query: 'a bus', group_by_video: true, top_k: 100 });
    const videos = grouped.map((hit) => hit.video_id);
    expect(new Set(videos).size).toBe(videos.length);
    const collapsed = await hits({
      image_base64: await base64Of('coffee.png'),
      video_ids: [slideshowId],
      collapse: true,
      top_k: 1,
    });
    // The coffee photo is shown from 6 s to 8 s: its frames at 6 and 7 s are one hit.
    expect(collapsed[0]).toMatchObject({ timestamp: expect.any(Number), from_seconds: 6, to_seconds: 7 });
    const plain = await hits({ image_base64: await base64Of('coffee.png'), video_ids: [slideshowId], top_k: 2 });
    expect(plain.map((hit) => hit.timestamp).sort()).toEqual([6, 7]);
  });

  it('finds frames like a stored one, leaving that frame out', async () => {
    const found = await hits({
      like: { bucket_name: BUCKET, video_id: slideshowId, timestamp: 6 },
      kinds: ['frame'],
      top_k: 3,
    });
    expect(found.some((hit) => hit.video_id === slideshowId && hit.timestamp === 6)).toBe(false);
    expect(found.slice(0, 2).map((hit) => photoOf(hit))).toEqual(['coffee.png', 'coffee.png']);
    const missing = await search({ like: { bucket_name: BUCKET, video_id: slideshowId, timestamp: 6.5 } });
    expect(missing).toEqual({
      status: 404,
      body: { status: 'error', message: expect.stringContaining('No stored frame') },
    });
  });

  it('applies min_score and top_k', async () => {
    const all = await hits({ query: 'a bus', top_k: 100 });
    const threshold = all[2].score;
    const above = await hits({ query: 'a bus', top_k: 100, min_score: threshold });
    expect(above.every((hit) => hit.score >= threshold)).toBe(true);
    expect(above.length).toBeLessThan(all.length);
    expect(await hits({ query: 'a bus', top_k: 2 })).toHaveLength(2);
  });

  it.each([
    [{}, 'one of query, image_base64, image_url or like is required'],
    [{ query: 'a bus', image_url: 'http://127.0.0.1/x.jpg' }, 'give only one of'],
    [{ query: '' }, 'query'],
    [{ query: 'a bus', top_k: 0 }, 'top_k'],
    [{ query: 'a bus', top_k: 101 }, 'top_k'],
    [{ query: 'a bus', kinds: ['scene'] }, 'kinds'],
    [{ query: 'a bus', tags_match: 'most' }, 'tags_match'],
    [{ query: 'a bus', from_seconds: 5, to_seconds: 2 }, 'to_seconds'],
    [{ query: 'a bus', ingested_after: 'yesterday' }, 'ingested_after'],
    [{ query: 'a bus', metadata: { video_id: 'x' } }, 'reserved'],
    [{ query: 'a bus', metadata: { camera: { nested: 1 } } }, 'metadata.camera'],
    [{ like: { bucket_name: BUCKET, video_id: 'x' } }, 'like.timestamp'],
    [{ query: 'a bus', bucket_name: 'Bad_Bucket' }, 'bucket_name'],
    [{ image_base64: 'not base64!' }, 'image_base64'],
    [{ image_base64: Buffer.from('plain text, not an image').toString('base64') }, 'image_base64'],
    [{ image_url: 'http://10.0.0.1/cam.jpg' }, 'image_url refused'],
  ])('answers 400 naming the field for %j', async (body, named) => {
    const res = await search(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: 'error', message: expect.stringContaining(named) });
  });

  it('finds media stored before descriptions existed by image at once, and by text after POST /media/process', async () => {
    const id = photoIds.get('motorcycle_left.png')!;
    // As a video ingested before this feature: image vectors, no description.
    await h.descriptionStore.delete({ equals: { bucket_name: BUCKET, video_id: id } });
    expect(await hits({ query: 'a motorcycle', video_ids: [id] })).toEqual([]);
    const byImage = await hits({ image_base64: await base64Of('motorcycle_left.png'), video_ids: [id], top_k: 1 });
    expect(byImage.map((hit) => hit.video_id)).toEqual([id]);
    expect((await postJson(`${h.base}/media/process`, { bucket_name: BUCKET, video_id: id })).status).toBe(201);
    const byText = await hits({ query: 'a motorcycle', video_ids: [id], top_k: 1 });
    expect(byText.map((hit) => hit.video_id)).toEqual([id]);
  });

  it('refuses a query image over the pixel limit from its header (413), as ingest does', async () => {
    const small = await h.variant({ env: { MM_DATAPREP_IMAGE_MAX_PIXELS: '10000' } });
    const res = await postJson(`${small.url}/v1/dataprep/search`, {
      image_base64: await base64Of('pexels_double_decker_bus.jpg'),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ status: 'error', message: expect.stringContaining('546') });
  });

  it('keeps descriptions with their video: deleting it removes them', async () => {
    const res = await postJson(`${h.base}/media/ingest`, {
      type: 'image_base64',
      image_base64: await base64Of('motorcycle_left.png'),
      filename: 'again.png',
      bucket_name: 'search-delete',
    });
    expect(res.status).toBe(201);
    const id = (await res.json()).video_id;
    const where = { equals: { bucket_name: 'search-delete', video_id: id } };
    expect(await h.descriptionStore.count(where)).toBeGreaterThan(0);
    expect((await fetch(`${h.base}/media/search-delete/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect(await h.descriptionStore.count(where)).toBe(0);
  });
});

/** A fixture photo as JPEG base64 (the test's ingest cap is 512 KiB; some fixture PNGs are larger). */
async function base64Of(photo: string): Promise<string> {
  return (await sharp(fixtureImage(photo)).jpeg({ quality: 90 }).toBuffer()).toString('base64');
}
