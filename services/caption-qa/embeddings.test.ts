import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { fixtureImage } from '../../test/support/fixtures.js';
import { captureLogs, logsWritten } from '../../test/support/logs.js';
import { VectorStoreUnavailableError, type VectorStore } from '../lib/vectors/index.js';
import { EMBEDDING_FAILED, IMAGE_DATA_REQUIRED } from './errors.js';
import { RetentionSweeper } from './frames/retention.js';
import {
  parseEventStream,
  postJson,
  realEmbedders,
  serveQa,
  type QaModels,
  type ServedQa,
} from './testing/serve-app.js';

let models: QaModels;
let qa: ServedQa;
let jpeg: Buffer;
const NOW = Date.UTC(2026, 2, 10, 15, 30);

const embed = (body: unknown, served = qa) => postJson(`${served.api}/embeddings`, body);
const caption = (result: string, extra: Record<string, unknown> = {}) => ({
  image_data: 'caption-only',
  metadata: { result, timestamp: NOW, ...extra },
});

beforeAll(async () => {
  models = await realEmbedders();
  qa = await serveQa(models, { clock: () => NOW });
  jpeg = await sharp(await readFile(fixtureImage('person_multi_det.jpg')))
    .resize(320)
    .jpeg({ quality: 80 })
    .toBuffer();
}, 120_000);

afterAll(async () => {
  await qa.close();
  await models.release();
});

describe('GET /api/health and /api/model', () => {
  it('names the vector store and says no LLM is configured', async () => {
    expect(await (await fetch(`${qa.api}/health`)).json()).toEqual({
      status: 'healthy',
      message: 'caption-qa is running; vector store: lancedb; no LLM configured (offline answers from captions)',
    });
  });

  it('names the offline answerer as the model', async () => {
    expect(await (await fetch(`${qa.api}/model`)).json()).toEqual({
      status: 'Success',
      llm_model: 'offline-caption-answerer',
    });
  });

  it('serves the OpenAPI document, /docs, /redoc and /metrics', async () => {
    const openapi = await (await fetch(`${qa.url}/openapi.json`)).json();
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining(['/api/health', '/api/model', '/api/embeddings', '/api/chat', '/api/frames/{id}']),
    );
    for (const path of ['/docs', '/redoc', '/metrics']) expect((await fetch(`${qa.url}${path}`)).status).toBe(200);
  });
});

describe('POST /api/embeddings', () => {
  it('stores a caption: its id, a success body, and the text vector in the captions collection', async () => {
    const before = await qa.deps.captions.count();
    const png = await embed({ image_data: 'iVBORw0KGgoAAAANSUhEUg==', metadata: { result: 'x' } });
    expect((await png.json()).message).toBe('Caption embedded and stored (frame not kept: not a decodable png image)');
    const text = await embed({
      image_data: Buffer.from('just some caption payload').toString('base64'),
      metadata: { result: 'x' },
    });
    expect((await text.json()).message).toBe(
      'Caption embedded and stored (frame not kept: not a JPEG, PNG, WebP or GIF image)',
    );
    const response = await embed(caption('A man in a blue jacket opens the gate', { camera: 'gate', frame_id: 7 }));
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toEqual({
      status: 'success',
      message: 'Caption embedded and stored (frame not kept: not base64)',
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
    });
    expect(await qa.deps.captions.count()).toBe(before + 3);
    expect(await qa.deps.captions.count({ equals: { camera: 'gate', frame_id: 7, timestamp: NOW } })).toBe(1);
    expect((await qa.deps.sources.known()).cameras).toContain('gate');
  });

  it.each([
    ['missing', {}],
    ['empty', { image_data: '' }],
    ['whitespace only', { image_data: ' \n\t ' }],
    ['not a string', { image_data: 42 }],
    ['null', { image_data: null }],
  ])('answers 422 with the contract detail when image_data is %s', async (_what, fields) => {
    const response = await embed({ metadata: { result: 'x' }, ...fields });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ detail: IMAGE_DATA_REQUIRED });
  });

  it.each([
    ['missing', undefined],
    ['a string', 'x'],
    ['a list', [1]],
    ['null', null],
  ])('answers 422 when metadata is %s', async (_what, metadata) => {
    const response = await embed({ image_data: 'abc', metadata });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ detail: 'metadata must be a JSON object' });
  });

  it.each([
    ['missing', {}],
    ['empty', { result: '' }],
    ['whitespace', { result: '   ' }],
  ])('answers 422 when the caption text (metadata.result) is %s', async (_what, metadata) => {
    const response = await embed({ image_data: 'abc', metadata });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      detail: 'metadata.result (the caption text) is required and cannot be empty',
    });
  });

  it('names each invalid known metadata key in one answer', async () => {
    const response = await embed({
      image_data: 'abc',
      metadata: { result: 'x', timestamp: 'noon', frame_id: -1, resolution: { width: 0 }, camera: '' },
    });
    expect(response.status).toBe(422);
    const { detail } = await response.json();
    for (const key of ['metadata.timestamp', 'metadata.frame_id', 'metadata.resolution.height', 'metadata.camera']) {
      expect(detail).toContain(key);
    }
  });

  it('refuses a caption with control characters', async () => {
    const response = await embed(caption('a\u0000b'));
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ detail: 'metadata.result must not contain control characters' });
  });

  it('refuses a caption over the length limit', async () => {
    const response = await embed(caption('x'.repeat(501)));
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ detail: 'metadata.result is over 500 characters' });
  });

  it('answers a body that is not an object, malformed JSON and an oversized body in {detail}', async () => {
    const list = await postJson(`${qa.api}/embeddings`, [1, 2]);
    expect(list.status).toBe(422);
    expect(await list.json()).toEqual({ detail: 'The request body must be a JSON object' });
    const malformed = await postJson(`${qa.api}/embeddings`, '{"image_data": ');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ detail: 'Invalid JSON body' });
    const huge = await embed(caption('x', { pad: 'y'.repeat(5 * 1024 * 1024) }));
    expect(huge.status).toBe(413);
    expect(Object.keys(await huge.json())).toEqual(['detail']);
  });

  it('keeps scalar extra metadata keys and names the ones it ignores', async () => {
    const response = await embed(
      caption('A cyclist passes', { zone: 'north', speed: 3.5, objects: [{ label: 'bike' }] }),
    );
    const body = await response.json();
    expect(body.message).toBe(
      'Caption embedded and stored (frame not kept: not base64); ignored metadata keys: objects',
    );
    expect(await qa.deps.captions.count({ equals: { x_zone: 'north', x_speed: 3.5 } })).toBe(1);
  });

  it('reads timestamps in seconds, milliseconds, microseconds and nanoseconds', async () => {
    const at = Date.UTC(2026, 0, 2, 3, 4, 5);
    for (const [unit, value] of [
      ['s', at / 1000],
      ['ms', at],
      ['us', at * 1000],
      ['ns', at * 1e6],
    ] as const) {
      const response = await embed({
        image_data: 'x',
        metadata: { result: `unit ${unit}`, timestamp: value, run_id: `units-${unit}` },
      });
      expect(response.status).toBe(200);
      expect(await qa.deps.captions.count({ equals: { run_id: `units-${unit}`, timestamp: at } })).toBe(1);
    }
  });

  it('answers an unexpected failure with the embedding-failed detail, logged with the request id, no internals', async () => {
    const logs = captureLogs({ level: 'error' });
    const broken: VectorStore = {
      ...qa.deps.captions,
      backend: 'lancedb',
      insert: async () => Promise.reject(new Error('disk on fire at /secret/path')),
    } as VectorStore;
    const failing = await serveQa(models, { captions: broken, logger: logs.logger });
    try {
      const response = await embed(caption('A door opens'), failing);
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ detail: EMBEDDING_FAILED });
      await logsWritten();
      const [line] = logs.lines('err');
      expect(line).toMatchObject({
        requestId: response.headers.get('x-request-id'),
        error: 'disk on fire at /secret/path',
      });
    } finally {
      await failing.close();
    }
  });

  it('answers 503 with the embedding-failed detail when the vector store is unavailable', async () => {
    const down = {
      ...qa.deps.captions,
      insert: async () => Promise.reject(new VectorStoreUnavailableError('connection refused')),
    } as VectorStore;
    const failing = await serveQa(models, { captions: down });
    try {
      const response = await embed(caption('A door opens'), failing);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ detail: `${EMBEDDING_FAILED}: storage is unavailable` });
    } finally {
      await failing.close();
    }
  });
});

describe('kept frames', () => {
  it('keeps a base64 frame, embeds it into the frames collection and serves it back by caption id', async () => {
    const framesBefore = await qa.deps.frames.count();
    const response = await embed({
      image_data: jpeg.toString('base64'),
      metadata: { result: 'Three people stand on a pavement', timestamp: NOW - 1000, camera: 'street' },
    });
    const { id, message } = await response.json();
    expect(message).toBe('Caption embedded and stored (frame kept)');
    expect(await qa.deps.frames.count()).toBe(framesBefore + 1);
    expect(await qa.deps.frames.count({ equals: { caption_id: id, camera: 'street' } })).toBe(1);
    const frame = await fetch(`${qa.api}/frames/${id}`);
    expect(frame.status).toBe(200);
    expect(frame.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await frame.arrayBuffer()).equals(jpeg)).toBe(true);

    const chat = await postJson(`${qa.api}/chat`, { input: 'people standing on the pavement on the street camera' });
    const [sources] = parseEventStream(await chat.text()).filter((e) => 'event' in e && e.event === 'sources');
    expect((sources as any).data[0]).toMatchObject({ id, camera: 'street', frame_url: `/api/frames/${id}` });
  });

  it('accepts a data: URL and tells why a frame is not kept', async () => {
    const dataUrl = await embed({
      image_data: `data:image/jpeg;base64,${jpeg.toString('base64')}`,
      metadata: { result: 'a' },
    });
    expect((await dataUrl.json()).message).toBe('Caption embedded and stored (frame kept)');
    const truncated = await embed({ image_data: jpeg.subarray(0, 600).toString('base64'), metadata: { result: 'b' } });
    expect((await truncated.json()).message).toBe(
      'Caption embedded and stored (frame not kept: not a decodable jpg image)',
    );
    // Noise does not compress: about 1.5 MB of PNG, over the 1 MB frame limit, under the 4 MB body limit.
    const big = await sharp(randomBytes(700 * 700 * 3), { raw: { width: 700, height: 700, channels: 3 } })
      .png()
      .toBuffer();
    const tooLarge = await embed({ image_data: big.toString('base64'), metadata: { result: 'c' } });
    expect((await tooLarge.json()).message).toBe(
      `Caption embedded and stored (frame not kept: frame over ${1024 * 1024} bytes)`,
    );
  });

  it('answers 404 for a caption without a kept frame and 422 for what is not a caption id', async () => {
    const missing = await fetch(`${qa.api}/frames/01890000-0000-7000-8000-000000000000`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: 'No frame is kept for this caption' });
    const bad = await fetch(`${qa.api}/frames/..%2F..%2Fetc%2Fpasswd`);
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({ detail: 'The frame id must be a caption id (a UUID)' });
  });

  it('retention deletes the oldest frames past the count limit, with their image vectors', async () => {
    const served = await serveQa(models);
    try {
      const ids: string[] = [];
      for (const result of ['first', 'second', 'third']) {
        const response = await embed({ image_data: jpeg.toString('base64'), metadata: { result } }, served);
        ids.push((await response.json()).id);
      }
      const sweeper = new RetentionSweeper({
        keptFrames: served.deps.keptFrames,
        frames: served.deps.frames,
        sources: served.deps.sources,
        limits: { maxCount: 2, maxAgeMs: 0 },
        logger: served.logger,
        clock: Date.now,
      });
      expect(await sweeper.sweep()).toBe(1);
      expect((await fetch(`${served.api}/frames/${ids[0]}`)).status).toBe(404);
      expect((await fetch(`${served.api}/frames/${ids[2]}`)).status).toBe(200);
      expect(await served.deps.frames.count()).toBe(2);
      expect(await served.deps.frames.count({ equals: { caption_id: ids[0] } })).toBe(0);
      // The caption stays; its source entry no longer links a frame.
      const chat = await postJson(`${served.api}/chat`, { input: 'first' });
      const sources = parseEventStream(await chat.text()).find((e) => 'event' in e && e.event === 'sources') as any;
      expect(sources.data.find((s: any) => s.id === ids[0])).toMatchObject({ frame_url: null });
    } finally {
      await served.close();
    }
  });
});
