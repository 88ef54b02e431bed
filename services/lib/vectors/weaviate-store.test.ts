import { describe, expect, it } from '@jest/globals';
import weaviate, { generateUuid5, type WeaviateClient } from 'weaviate-client';
import { CONTRACT_DIMENSION, describeVectorStoreContract } from './vector-store.contract.js';
import { VectorStoreUnavailableError } from './vector-store.js';
import type { WeaviatePropertyDefinition } from './weaviate-mapping.js';
import { FakeWeaviate } from './testing/fake-weaviate.js';
import { connectWeaviate, INSERT_BATCH, WeaviateVectorStore, type WeaviateObject } from './weaviate-store.js';

describeVectorStoreContract('weaviate adapter on an in-memory Weaviate stand-in', async () => {
  const fake = new FakeWeaviate();
  return {
    store: await WeaviateVectorStore.open({ client: fake, collection: 'Embeddings', dimension: CONTRACT_DIMENSION }),
  };
});

const weaviateUrl = process.env.WEAVIATE_URL;
if (weaviateUrl) {
  let counter = 0;
  describeVectorStoreContract(`weaviate server at ${weaviateUrl}`, async () => {
    const collection = `ArgusContract${Date.now()}x${++counter}`;
    const client = await connectWeaviate({
      url: weaviateUrl,
      grpcUrl: process.env.WEAVIATE_GRPC_URL,
      apiKey: process.env.WEAVIATE_API_KEY,
    });
    const store = await WeaviateVectorStore.open({ client, collection, dimension: CONTRACT_DIMENSION });
    return {
      store,
      cleanup: async () => {
        const admin = (await connectWeaviate({
          url: weaviateUrl,
          grpcUrl: process.env.WEAVIATE_GRPC_URL,
          apiKey: process.env.WEAVIATE_API_KEY,
        })) as unknown as WeaviateClient;
        await admin.collections.delete(collection);
        await admin.close();
      },
    };
  });
} else {
  describe.skip('VectorStore contract: weaviate server (skipped: WEAVIATE_URL is not set and no Weaviate can run on this machine)', () => {
    it('needs WEAVIATE_URL', () => undefined);
  });
}

describe('WeaviateVectorStore requests', () => {
  let fake: FakeWeaviate;
  const open = async () => {
    fake = new FakeWeaviate();
    return WeaviateVectorStore.open({ client: fake, collection: 'Frames', dimension: 3 });
  };

  it('creates a missing collection with canonical typed properties, self-provided vectors and cosine HNSW', async () => {
    await open();
    const [[config]] = fake.callsOf('create') as [
      [{ name: string; properties: WeaviatePropertyDefinition[]; vectorizers: unknown }],
    ];
    expect(config.name).toBe('Frames');
    const text = { dataType: 'text', tokenization: 'field', indexFilterable: true, indexSearchable: false };
    expect(config.properties).toEqual([
      { name: 'record_id', ...text },
      { name: 'video_id', ...text },
      { name: 'bucket_name', ...text },
      { name: 'video_name', ...text },
      { name: 'source_path', ...text },
      { name: 'frame_id', dataType: 'int', indexFilterable: true, indexRangeFilters: true },
      { name: 'timestamp', dataType: 'number', indexFilterable: true, indexRangeFilters: true },
      { name: 'tags', ...text, dataType: 'text[]' },
      { name: 'label', ...text },
      { name: 'kind', ...text },
      { name: 'extra', dataType: 'text', indexFilterable: false, indexSearchable: false },
    ]);
    expect(config.vectorizers).toEqual(
      weaviate.configure.vectors.selfProvided({
        vectorIndexConfig: weaviate.configure.vectorIndex.hnsw({ distanceMetric: 'cosine' }),
      }),
    );
    expect(config.vectorizers).toMatchObject({
      vectorizer: { name: 'none' },
      vectorIndex: { config: { distance: 'cosine' } },
    });
  });

  it('uses an existing collection as it is', async () => {
    fake = new FakeWeaviate();
    fake.addCollection('Frames', [{ name: 'record_id', dataType: 'text' }]);
    await WeaviateVectorStore.open({ client: fake, collection: 'Frames', dimension: 3 });
    expect(fake.callsOf('create')).toEqual([]);
  });

  it('inserts objects with uuid5 ids, typed canonical properties, JSON user fields and the exact vectors', async () => {
    const store = await open();
    await store.insert([
      {
        id: 'frame-1',
        vector: new Float32Array([0.5, 0.25, -1]),
        metadata: {
          video_id: 'v1',
          bucket_name: 'b',
          frame_id: 7,
          timestamp: 3.5,
          tags: ['car'],
          label: null,
          camera: 'cam-1',
          hint: 2,
          'Odd Key': true,
          colors: ['red'],
        },
      },
    ]);
    expect(fake.callsOf('addProperty').map(([p]) => p)).toEqual([
      { name: 'm_camera', dataType: 'text', tokenization: 'field', indexFilterable: true, indexSearchable: false },
      { name: 'm_hint', dataType: 'text', tokenization: 'field', indexFilterable: true, indexSearchable: false },
      { name: 'n_hint', dataType: 'number', indexFilterable: true, indexRangeFilters: true },
      {
        name: `mx_${Buffer.from('Odd Key').toString('hex')}`,
        dataType: 'text',
        tokenization: 'field',
        indexFilterable: true,
        indexSearchable: false,
      },
      { name: 'l_colors', dataType: 'text[]', tokenization: 'field', indexFilterable: true, indexSearchable: false },
    ]);
    const [[objects]] = fake.callsOf('insertMany') as [[WeaviateObject[]]];
    expect(objects).toEqual([
      {
        id: generateUuid5('frame-1'),
        vectors: [0.5, 0.25, -1],
        properties: {
          record_id: 'frame-1',
          video_id: 'v1',
          bucket_name: 'b',
          frame_id: 7,
          timestamp: 3.5,
          tags: ['car'],
          m_camera: '"cam-1"',
          m_hint: '2',
          n_hint: 2,
          [`mx_${Buffer.from('Odd Key').toString('hex')}`]: 'true',
          l_colors: ['"red"'],
          extra: JSON.stringify({ label: null, camera: 'cam-1', hint: 2, 'Odd Key': true, colors: ['red'] }),
        },
      },
    ]);
  });

  it(`sends inserts in batches of ${INSERT_BATCH}`, async () => {
    const store = await open();
    const records = Array.from({ length: 450 }, (_, i) => ({
      id: `r${i}`,
      vector: [1, i, 0],
      metadata: { video_id: 'v' },
    }));
    await store.insert(records);
    expect(fake.callsOf('insertMany').map(([batch]) => (batch as unknown[]).length)).toEqual([200, 200, 50]);
  });

  it('searches with nearVector, limit, an And of Equal/ContainsAny filters and distance metadata', async () => {
    const store = await open();
    await store.insert([{ id: 'a', vector: [1, 0, 0], metadata: { video_id: 'v1', tags: ['car'], camera: 'c1' } }]);
    const hits = await store.search(new Float32Array([1, 0, 0]), 5, {
      equals: { video_id: 'v1', frame_id: 3, camera: 'c1' },
      tagsAny: ['car', 'bus'],
    });
    const [[vector, options]] = fake.callsOf('nearVector');
    expect(vector).toEqual([1, 0, 0]);
    expect(options).toEqual({
      limit: 5,
      returnMetadata: ['distance'],
      filters: {
        operator: 'And',
        value: null,
        filters: [
          { operator: 'Equal', target: { property: 'video_id' }, value: 'v1' },
          { operator: 'Equal', target: { property: 'frame_id' }, value: 3 },
          { operator: 'Equal', target: { property: 'm_camera' }, value: '"c1"' },
          { operator: 'ContainsAny', target: { property: 'tags' }, value: ['car', 'bus'] },
        ],
      },
    });
    expect(hits).toEqual([]);
    const single = await store.search([1, 0, 0], 1, { equals: { video_id: 'v1' } });
    expect(fake.callsOf('nearVector')[1][1]).toEqual({
      limit: 1,
      returnMetadata: ['distance'],
      filters: { operator: 'Equal', target: { property: 'video_id' }, value: 'v1' },
    });
    expect(single).toEqual([{ id: 'a', score: 1, metadata: { video_id: 'v1', tags: ['car'], camera: 'c1' } }]);
    await store.search([1, 0, 0], 2);
    expect(fake.callsOf('nearVector')[2][1]).toEqual({ limit: 2, returnMetadata: ['distance'] });
  });

  it('builds range, in and containsAll with greaterOrEqual/lessOrEqual, containsAny, containsAll, And and Or', async () => {
    const store = await open();
    await store.insert([
      { id: 'a', vector: [1, 0, 0], metadata: { video_id: 'v1', upload_ts: 1.7e9, labels: ['bus'], zone: 'north' } },
      { id: 'b', vector: [0, 1, 0], metadata: { video_id: 'v2', zone: ['south'] } },
    ]);
    const on = (property: string, operator: string, value: unknown) => ({ operator, target: { property }, value });
    const sent = async (filter: Parameters<WeaviateVectorStore['search']>[2]) => {
      await store.search([1, 0, 0], 3, filter);
      const calls = fake.callsOf('nearVector');
      return (calls[calls.length - 1][1] as { filters?: unknown }).filters;
    };
    // Canonical number, user number (n_*), canonical integer with fractional bounds rounded inwards.
    expect(
      await sent({
        range: { timestamp: { gte: 1.5, lte: 3 }, upload_ts: { gte: 1.6e9 }, frame_id: { gte: 2.5, lte: 7.9 } },
      }),
    ).toEqual({
      operator: 'And',
      value: null,
      filters: [
        {
          operator: 'And',
          value: null,
          filters: [on('timestamp', 'GreaterThanEqual', 1.5), on('timestamp', 'LessThanEqual', 3)],
        },
        on('n_upload_ts', 'GreaterThanEqual', 1.6e9),
        {
          operator: 'And',
          value: null,
          filters: [on('frame_id', 'GreaterThanEqual', 3), on('frame_id', 'LessThanEqual', 7)],
        },
      ],
    });
    // No bounds: any number, which is >= 0 or <= 0.
    expect(await sent({ range: { timestamp: {} } })).toEqual({
      operator: 'Or',
      value: null,
      filters: [on('timestamp', 'GreaterThanEqual', 0), on('timestamp', 'LessThanEqual', 0)],
    });
    // in: containsAny on canonical text and int properties (values of another type dropped), Equal per value on a
    // `number` property, and on a user key both its scalar (m_*) and its list (l_*) property, JSON-encoded.
    expect(
      await sent({ in: { video_id: ['v1', 'v2', 3], frame_id: [1, 2, 'x'], timestamp: [1, 2.5], zone: ['north'] } }),
    ).toEqual({
      operator: 'And',
      value: null,
      filters: [
        on('video_id', 'ContainsAny', ['v1', 'v2']),
        on('frame_id', 'ContainsAny', [1, 2]),
        { operator: 'Or', value: null, filters: [on('timestamp', 'Equal', 1), on('timestamp', 'Equal', 2.5)] },
        {
          operator: 'Or',
          value: null,
          filters: [on('m_zone', 'ContainsAny', ['"north"']), on('l_zone', 'ContainsAny', ['"north"'])],
        },
      ],
    });
    expect(await sent({ in: { tags: ['car'], labels: ['bus', 'car'] } })).toEqual({
      operator: 'And',
      value: null,
      filters: [on('tags', 'ContainsAny', ['car']), on('l_labels', 'ContainsAny', ['"bus"', '"car"'])],
    });
    expect(
      await sent({ containsAll: { tags: ['car', 'person'], labels: ['bus'] }, equals: { video_id: 'v1' } }),
    ).toEqual({
      operator: 'And',
      value: null,
      filters: [
        on('video_id', 'Equal', 'v1'),
        on('tags', 'ContainsAll', ['car', 'person']),
        on('l_labels', 'ContainsAll', ['"bus"']),
      ],
    });
    // An empty containsAll does not restrict; the store's answers agree with the filters sent.
    expect(await sent({ containsAll: { labels: [] } })).toBeUndefined();
    expect((await store.search([1, 0, 0], 3, { in: { zone: ['south'] } })).map((h) => h.id)).toEqual(['b']);
    expect((await store.search([1, 0, 0], 3, { range: { upload_ts: { lte: 2e9 } } })).map((h) => h.id)).toEqual(['a']);
  });

  it('answers range, in and containsAll that no record can satisfy without a search request', async () => {
    const store = await open();
    await store.insert([{ id: 'a', vector: [1, 0, 0], metadata: { video_id: 'v1', camera: 'c1' } }]);
    const before = fake.calls.length;
    expect(await store.search([1, 0, 0], 3, { range: { video_id: { gte: 1 } } })).toEqual([]);
    expect(await store.search([1, 0, 0], 3, { in: { video_id: [] } })).toEqual([]);
    expect(await store.search([1, 0, 0], 3, { in: { frame_id: ['1'] } })).toEqual([]);
    expect(await store.search([1, 0, 0], 3, { containsAll: { video_id: ['v1'] } })).toEqual([]);
    expect(await store.search([1, 0, 0], 3, { containsAll: { tags: ['car', 7] } })).toEqual([]);
    expect(fake.calls.slice(before)).toEqual([]);
    // A user key without the property a condition needs: one more look at the config (another replica may have
    // added it), then no search.
    expect(await store.count({ range: { camera: { gte: 0 } } })).toBe(0);
    expect(await store.count({ containsAll: { camera: ['c1'] } })).toBe(0);
    expect(fake.calls.slice(before).map((c) => c.op)).toEqual(['config.get', 'config.get']);
  });

  it('answers without a request when no record can match', async () => {
    const store = await open();
    const before = fake.calls.length;
    expect(await store.search([1, 0, 0], 3, { equals: { frame_id: 'seven' } })).toEqual([]);
    expect(await store.count({ equals: { timestamp: true } })).toBe(0);
    expect(fake.calls.slice(before).map((c) => c.op)).toEqual([]);
    // An unknown user key is looked up once more (another replica may have added it), then answered locally.
    expect(await store.delete({ equals: { never_seen: 'x' } })).toBe(0);
    expect(fake.calls.slice(before).map((c) => c.op)).toEqual(['config.get']);
  });

  it('deletes with deleteMany by filter, repeating while pages come back full, and everything with Like "*"', async () => {
    fake = new FakeWeaviate();
    fake.deletePage = 2;
    const store = await WeaviateVectorStore.open({
      client: fake,
      collection: 'Frames',
      dimension: 3,
      deletePageSize: 2,
    });
    await store.insert(
      Array.from({ length: 5 }, (_, i) => ({ id: `r${i}`, vector: [1, 0, i], metadata: { video_id: 'v1' } })),
    );
    await store.insert([{ id: 'other', vector: [0, 1, 0], metadata: { video_id: 'v2' } }]);
    expect(await store.delete({ equals: { video_id: 'v1' } })).toBe(5);
    const byVideo = { operator: 'Equal', target: { property: 'video_id' }, value: 'v1' };
    expect(fake.callsOf('deleteMany')).toEqual([[byVideo], [byVideo], [byVideo]]);
    expect(await store.delete({})).toBe(1);
    expect(fake.callsOf('deleteMany')[3]).toEqual([
      { operator: 'Like', target: { property: 'record_id' }, value: '*' },
    ]);
    expect(await store.count()).toBe(0);
  });

  it('deletes all but one run with Equal and NotEqual; an unknown notEquals key is looked up, then restricts nothing', async () => {
    const store = await open();
    await store.insert([
      { id: 'old', vector: [1, 0, 0], metadata: { video_id: 'v1' } },
      { id: 'new', vector: [0, 1, 0], metadata: { video_id: 'v1', run_id: 'r2' } },
    ]);
    expect(await store.delete({ equals: { video_id: 'v1' }, notEquals: { run_id: 'r2', frame_id: 7 } })).toBe(1);
    expect(fake.callsOf('deleteMany')).toEqual([
      [
        {
          operator: 'And',
          value: null,
          filters: [
            { operator: 'Equal', target: { property: 'video_id' }, value: 'v1' },
            { operator: 'NotEqual', target: { property: 'm_run_id' }, value: '"r2"' },
            { operator: 'NotEqual', target: { property: 'frame_id' }, value: 7 },
          ],
        },
      ],
    ]);
    const before = fake.calls.length;
    expect(await store.count({ notEquals: { never_seen: 'x', frame_id: 'seven' } })).toBe(1);
    expect(fake.calls.slice(before)).toEqual([
      { op: 'config.get', args: [] },
      { op: 'graphql.aggregate', args: ['Frames', undefined] },
    ]);
  });

  it('counts with a GraphQL Aggregate whose where carries each value in the field of its property type', async () => {
    const store = await open();
    await store.insert([
      {
        id: 'a',
        vector: [1, 0, 0],
        metadata: { bucket_name: 'b1', frame_id: 2, timestamp: 3, tags: ['car'], hint: 1 },
      },
    ]);
    expect(await store.count()).toBe(1);
    expect(await store.count({ equals: { bucket_name: 'b1' } })).toBe(1);
    // Integral values on number properties (timestamp, n_hint) travel as valueNumber, not as the valueInt
    // weaviate-client would choose for a JavaScript 3; int properties take valueInt, text lists valueText arrays.
    const filter = {
      range: { hint: { gte: 1, lte: 1 }, frame_id: { gte: 2 } },
      in: { timestamp: [3] },
      equals: { timestamp: 3 },
      tagsAny: ['car'],
    };
    expect(await store.count(filter)).toBe(1);
    const on = (property: string, operator: string, field: string, value: unknown) => ({
      operator,
      path: [property],
      [field]: value,
    });
    expect(fake.callsOf('graphql.aggregate')).toEqual([
      ['Frames', undefined],
      ['Frames', on('bucket_name', 'Equal', 'valueText', 'b1')],
      [
        'Frames',
        {
          operator: 'And',
          operands: [
            on('timestamp', 'Equal', 'valueNumber', 3),
            on('tags', 'ContainsAny', 'valueTextArray', ['car']),
            {
              operator: 'And',
              operands: [
                on('n_hint', 'GreaterThanEqual', 'valueNumber', 1),
                on('n_hint', 'LessThanEqual', 'valueNumber', 1),
              ],
            },
            on('frame_id', 'GreaterThanEqual', 'valueInt', 2),
            on('timestamp', 'Equal', 'valueNumber', 3),
          ],
        },
      ],
    ]);
  });

  it('counts in the capitalized class of a collection named in lower case', async () => {
    fake = new FakeWeaviate();
    const store = await WeaviateVectorStore.open({ client: fake, collection: 'frames', dimension: 3 });
    await store.insert([{ id: 'a', vector: [1, 0, 0], metadata: { video_id: 'v1' } }]);
    expect(await store.count({ equals: { video_id: 'v1' } })).toBe(1);
    expect(fake.callsOf('graphql.aggregate').map(([name]) => name)).toEqual(['Frames']);
  });

  it('refuses to count on a canonical property the existing collection does not declare', async () => {
    fake = new FakeWeaviate();
    fake.addCollection('Frames', [{ name: 'record_id', dataType: 'text' }]);
    const store = await WeaviateVectorStore.open({ client: fake, collection: 'Frames', dimension: 3 });
    const refused = store.count({ equals: { timestamp: 3 } });
    await expect(refused).rejects.toThrow(VectorStoreUnavailableError);
    await expect(refused).rejects.toThrow('collection Frames has no property timestamp');
    expect(fake.callsOf('graphql.aggregate')).toEqual([]);
  });

  it('anchors a filter of NotEquals alone on every live object, so a count after deletes counts each object once', async () => {
    const store = await open();
    await store.insert([
      { id: 'a', vector: [1, 0, 0], metadata: { frame_id: 1 } },
      { id: 'b', vector: [0, 1, 0], metadata: { frame_id: 2 } },
      { id: 'c', vector: [0, 0, 1], metadata: {} },
    ]);
    expect(await store.delete({ equals: { frame_id: 2 } })).toBe(1);
    // The server's NotEqual still holds b's doc id; And with Like '*' on record_id drops it.
    expect(await store.count({ notEquals: { frame_id: 1 } })).toBe(1);
    expect(fake.callsOf('graphql.aggregate').at(-1)).toEqual([
      'Frames',
      {
        operator: 'And',
        operands: [
          { operator: 'Like', path: ['record_id'], valueText: '*' },
          { operator: 'NotEqual', path: ['frame_id'], valueInt: 1 },
        ],
      },
    ]);
    expect((await store.search([0, 0, 1], 5, { notEquals: { frame_id: 1 } })).map((h) => h.id)).toEqual(['c']);
  });

  it('re-processes a video: keeps the new run and deletes older runs, those written without run_id included', async () => {
    const store = await open();
    const video = { bucket_name: 'media', video_id: 'v1' };
    const run = (runId: string | undefined, count: number, offset: number) =>
      Array.from({ length: count }, (_, i) => ({
        id: `${runId ?? 'legacy'}-${i}`,
        vector: [1, i + offset, 0],
        metadata: { ...video, frame_id: i, ...(runId ? { run_id: runId } : {}) },
      }));
    const replaceWith = async (runId: string) => {
      const earlierRuns = { equals: video, notEquals: { run_id: runId } };
      return store.delete(earlierRuns);
    };
    await store.insert(run(undefined, 4, 0)); // an older Argus wrote no run_id
    await store.insert([{ id: 'other', vector: [0, 1, 0], metadata: { bucket_name: 'media', video_id: 'v2' } }]);
    await store.insert(run('r1', 3, 10));
    expect(await replaceWith('r1')).toBe(4);
    expect(await store.count({ equals: video })).toBe(3);
    await store.insert(run('r2', 2, 20));
    expect(await replaceWith('r2')).toBe(3);
    expect(await store.count({ equals: video })).toBe(2);
    expect(await store.count({ equals: { run_id: 'r2' } })).toBe(2);
    // Seven objects were deleted; their doc ids are still in the server's NotEqual, never in an answer.
    expect(await store.count({ notEquals: { run_id: 'r2' } })).toBe(1);
    expect(await store.count()).toBe(3);
    expect(fake.objectCount('Frames')).toBe(3);
  });

  it('reports failures as VectorStoreUnavailableError', async () => {
    const store = await open();
    fake.ready = false;
    await expect(store.health()).rejects.toThrow(VectorStoreUnavailableError);
    fake.failNext = new Error('connect ECONNREFUSED');
    await expect(store.health()).rejects.toThrow(VectorStoreUnavailableError);
    fake.failNext = new Error('grpc unavailable');
    await expect(store.search([1, 0, 0], 1)).rejects.toThrow(VectorStoreUnavailableError);
    fake.failNext = new Error('boom');
    await expect(store.count()).rejects.toThrow(VectorStoreUnavailableError);
  });

  it('reports objects the server rejects', async () => {
    const store = await open();
    fake.schemaOf('Frames').splice(0); // the server lost its schema: every property is unknown now
    (store as unknown as { properties: Map<string, string> }).properties.set('m_x', 'text');
    await expect(store.insert([{ id: 'a', vector: [1, 0, 0], metadata: { x: 1 } }])).rejects.toThrow(
      VectorStoreUnavailableError,
    );
  });

  it('connectWeaviate fails with VectorStoreUnavailableError when nothing listens', async () => {
    await expect(connectWeaviate({ url: 'http://127.0.0.1:9', grpcUrl: 'http://127.0.0.1:9' })).rejects.toThrow(
      VectorStoreUnavailableError,
    );
  });
});
