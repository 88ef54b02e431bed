import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ImageEmbedder, TextEmbedder } from '../../lib/inference/roles.js';
import { LanceDbVectorStore } from '../../lib/vectors/index.js';
import { MediaSearch } from './media-search.js';
import type { SearchQuery } from './search-query.js';

/*
 * CLIP mode cannot run with a real CLIP model here (none is available offline), so this checks its plumbing: a
 * text and an image embedder of one dimension, real LanceDB stores, and the rank fusion of the two rankings.
 */
const DIM = 4;
const axis = (i: number) => Float32Array.from({ length: DIM }, (_, j) => (j === i ? 1 : 0));
const info = { name: 'clip-style', device: 'cpu' as const };
const textEmbedder: TextEmbedder = {
  info,
  dimension: DIM,
  embed: async (texts) => texts.map((text) => axis(text.includes('bus') ? 0 : 3)),
};
const imageEmbedder: ImageEmbedder = { info, dimension: DIM, embed: async (images) => images.map(() => axis(0)) };

const frame = (videoId: string) => ({
  bucket_name: 'b',
  video_id: videoId,
  kind: 'frame',
  media_type: 'video',
  timestamp: 1,
  frame_id: 30,
  fps: 30,
  frame_interval: 30,
  tags: [],
});

let dir: string;
let stores: LanceDbVectorStore[];
let search: MediaSearch;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'media-search-'));
  const open = (table: string) => LanceDbVectorStore.open({ dir, table, dimension: DIM });
  stores = [await open('images'), await open('descriptions'), await open('summaries')];
  const [imageStore, descriptionStore, summaryStore] = stores;
  // "pixels": a looks like the query; "description": only b is described as holding a bus.
  await imageStore.insert([
    { id: 'a', vector: axis(0), metadata: frame('a') },
    { id: 'b', vector: axis(1), metadata: frame('b') },
  ]);
  await descriptionStore.insert([
    { id: 'b-d', vector: axis(0), metadata: { ...frame('b'), labels: ['bus'], description: 'a bus' } },
  ]);
  search = new MediaSearch({ imageStore, descriptionStore, summaryStore, imageEmbedder, textEmbedder, basePath: '' });
});

afterAll(async () => {
  for (const store of stores ?? []) await store.close();
  await rm(dir, { recursive: true, force: true });
});

const query: SearchQuery = { filters: {}, kinds: ['frame'], topK: 10, groupByVideo: false, collapse: false };

describe('MediaSearch with a CLIP-style pair', () => {
  it('is in clip mode and fuses the image ranking with the description ranking by rank', async () => {
    expect(search.mode).toBe('clip');
    const answer = await search.byText(query, 'a bus');
    expect(answer).toMatchObject({ mode: 'clip', labels: ['bus'] });
    // b: first by description, second by pixels; a: first by pixels only.
    expect(answer.hits.map((hit) => hit.video_id)).toEqual(['b', 'a']);
    expect(answer.hits[0].score).toBeCloseTo(0.5 + 61 / 62 / 2, 6);
    expect(answer.hits[1].score).toBeCloseTo(0.5, 6);
  });
});
