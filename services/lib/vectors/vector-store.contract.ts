import { afterEach, describe, expect, it } from '@jest/globals';
import type { MetadataValue, VectorRecord, VectorStore } from './vector-store.js';

/** A store made for one contract case; `reopen` (when the backend persists locally) closes and opens it again. */
export interface VectorStoreFixture {
  store: VectorStore;
  reopen?: () => Promise<VectorStore>;
  cleanup?: () => Promise<void>;
}

/** Dimension every contract case uses. */
export const CONTRACT_DIMENSION = 8;

/** Deterministic unit-ish vectors so hits and scores are reproducible. */
function vectorFor(seed: number): number[] {
  let x = (seed * 2654435761) >>> 0 || 1;
  return Array.from({ length: CONTRACT_DIMENSION }, () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return ((x >>> 0) / 0xffffffff) * 2 - 1;
  });
}

function record(i: number, metadata: Record<string, MetadataValue>): VectorRecord {
  return { id: `rec-${i}`, vector: i % 2 ? new Float32Array(vectorFor(i)) : vectorFor(i), metadata };
}

/** Twelve frames over three videos in two buckets, with tags and user metadata. */
function corpus(): VectorRecord[] {
  return Array.from({ length: 12 }, (_, i) =>
    record(i, {
      video_id: `vid-${i % 3}`,
      bucket_name: i < 6 ? 'bucket-a' : 'bucket-b',
      timestamp: i * 1.5,
      frame_id: i,
      tags: i % 4 === 0 ? ['person', 'car'] : i % 4 === 1 ? ['car'] : [],
      camera: i % 2 ? 'cam-odd' : 'cam-even',
      priority: i % 3,
    }),
  );
}

/** The VectorStore contract: every adapter must pass it unchanged. */
export function describeVectorStoreContract(name: string, makeStore: () => Promise<VectorStoreFixture>): void {
  describe(`VectorStore contract: ${name}`, () => {
    let fixture: VectorStoreFixture | undefined;
    const open = async (): Promise<VectorStore> => {
      fixture = await makeStore();
      return fixture.store;
    };
    afterEach(async () => {
      await fixture?.store.close();
      await fixture?.cleanup?.();
      fixture = undefined;
    });

    it('is healthy and empty at first', async () => {
      const store = await open();
      expect(await store.health()).toBe('ok');
      expect(await store.count()).toBe(0);
      expect(await store.search(vectorFor(1), 5)).toEqual([]);
    });

    it('inserts a batch and finds the top-k by cosine similarity, best first', async () => {
      const store = await open();
      await store.insert(corpus());
      expect(await store.count()).toBe(12);
      const hits = await store.search(vectorFor(7), 3);
      expect(hits).toHaveLength(3);
      expect(hits[0].id).toBe('rec-7');
      expect(hits[0].score).toBeCloseTo(1, 4);
      expect(hits[1].score).toBeLessThanOrEqual(hits[0].score);
      expect(hits[2].score).toBeLessThanOrEqual(hits[1].score);
      // A scaled copy points the same way: cosine similarity ignores length.
      const scaled = await store.search(new Float32Array(vectorFor(7).map((v) => v * 3)), 1);
      expect(scaled[0].id).toBe('rec-7');
      const opposite = await store.search(
        vectorFor(7).map((v) => -v),
        12,
      );
      expect(opposite[opposite.length - 1]).toMatchObject({ id: 'rec-7' });
      expect(opposite[opposite.length - 1].score).toBeCloseTo(-1, 4);
    });

    it('restricts search by equality on canonical and user fields, type included', async () => {
      const store = await open();
      await store.insert(corpus());
      const byVideo = await store.search(vectorFor(7), 12, { equals: { video_id: 'vid-0' } });
      expect(byVideo.map((h) => h.id).sort()).toEqual(['rec-0', 'rec-3', 'rec-6', 'rec-9']);
      const both = await store.search(vectorFor(7), 12, { equals: { video_id: 'vid-0', bucket_name: 'bucket-b' } });
      expect(both.map((h) => h.id).sort()).toEqual(['rec-6', 'rec-9']);
      const byFrame = await store.search(vectorFor(7), 12, { equals: { frame_id: 4 } });
      expect(byFrame.map((h) => h.id)).toEqual(['rec-4']);
      const byUser = await store.search(vectorFor(7), 12, { equals: { camera: 'cam-odd', priority: 1 } });
      expect(byUser.map((h) => h.id).sort()).toEqual(['rec-1', 'rec-7']);
      expect(await store.search(vectorFor(7), 12, { equals: { priority: '1' } })).toEqual([]);
      expect(await store.search(vectorFor(7), 12, { equals: { frame_id: '4' } })).toEqual([]);
      expect(await store.search(vectorFor(7), 12, { equals: { never_written: 'x' } })).toEqual([]);
      const topTwo = await store.search(vectorFor(3), 2, { equals: { bucket_name: 'bucket-a' } });
      expect(topTwo).toHaveLength(2);
      expect(topTwo[0].id).toBe('rec-3');
    });

    it('filters by tags (any of), alone and with equality; an empty tag list does not restrict', async () => {
      const store = await open();
      await store.insert(corpus());
      const persons = await store.search(vectorFor(1), 12, { tagsAny: ['person'] });
      expect(persons.map((h) => h.id).sort()).toEqual(['rec-0', 'rec-4', 'rec-8']);
      const any = await store.search(vectorFor(1), 12, { tagsAny: ['person', 'car'] });
      expect(any).toHaveLength(6);
      const mixed = await store.search(vectorFor(1), 12, { tagsAny: ['car'], equals: { bucket_name: 'bucket-b' } });
      expect(mixed.map((h) => h.id).sort()).toEqual(['rec-8', 'rec-9']);
      expect(await store.search(vectorFor(1), 12, { tagsAny: ['boat'] })).toEqual([]);
      expect(await store.search(vectorFor(1), 12, { tagsAny: [] })).toHaveLength(12);
      expect(await store.count({ tagsAny: ['car'] })).toBe(6);
    });

    it('matches notEquals on records with another value, another type or without the field', async () => {
      const store = await open();
      await store.insert(corpus());
      const here = { video_id: 'vid-0', bucket_name: 'bucket-a' };
      await store.insert([
        record(20, { ...here, run_id: 'run-2' }),
        record(21, { ...here, run_id: 'run-1' }),
        record(22, { video_id: 'vid-1', bucket_name: 'bucket-a', run_id: 'run-2' }),
      ]);
      expect(await store.count({ notEquals: { run_id: 'run-2' } })).toBe(13);
      expect(await store.count({ notEquals: { never_written: 'x' } })).toBe(15);
      expect(await store.count({ notEquals: { priority: '1' } })).toBe(15);
      expect(await store.count({ notEquals: { priority: 1 } })).toBe(11);
      const others = await store.search(vectorFor(21), 15, { equals: here, notEquals: { run_id: 'run-2' } });
      expect(others.map((h) => h.id).sort()).toEqual(['rec-0', 'rec-21', 'rec-3']);
      // Replace-on-success: everything of the video except the run that just completed.
      expect(await store.delete({ equals: here, notEquals: { run_id: 'run-2' } })).toBe(3);
      expect(await store.count({ equals: here })).toBe(1);
      expect(await store.count({ equals: { run_id: 'run-2' } })).toBe(2);
      expect(await store.count()).toBe(12);
      expect(await store.count({ notEquals: { frame_id: 4 } })).toBe(11);
      expect(await store.count({ notEquals: { frame_id: 'four' } })).toBe(12);
      expect(await store.count({ notEquals: { frame_id: 4, run_id: 'run-2' } })).toBe(9);
    });

    it('filters by numeric range, inclusive, on canonical and user numbers; other types and absent fields never match', async () => {
      const store = await open();
      await store.insert(corpus());
      await store.insert([record(30, { video_id: 'vid-x', priority: '1', camera: 'cam-odd' })]);
      const ids = async (filter: Parameters<VectorStore['count']>[0]) =>
        (await store.search(vectorFor(1), 20, filter)).map((h) => h.id).sort();
      // timestamps are i * 1.5: 3 and 6 are hit exactly, so both bounds are inclusive.
      expect(await ids({ range: { timestamp: { gte: 3, lte: 6 } } })).toEqual(['rec-2', 'rec-3', 'rec-4']);
      expect(await ids({ range: { timestamp: { gte: 15 } } })).toEqual(['rec-10', 'rec-11']);
      expect(await ids({ range: { timestamp: { lte: 1.5 } } })).toEqual(['rec-0', 'rec-1']);
      // A fractional bound on an integer field, and a negative zero bound.
      expect(await ids({ range: { frame_id: { gte: 2.5, lte: 5 } } })).toEqual(['rec-3', 'rec-4', 'rec-5']);
      expect(await store.count({ range: { frame_id: { gte: -0, lte: 0.5 } } })).toBe(1);
      // The user field `priority` holds numbers except on rec-30 (the string '1'), which no range matches.
      expect(await store.count({ range: { priority: { gte: 1, lte: 1 } } })).toBe(4);
      expect(await store.count({ range: { priority: {} } })).toBe(12);
      expect(await store.count({ range: { camera: {} } })).toBe(0);
      expect(await store.count({ range: { never_written: { gte: 0 } } })).toBe(0);
      // Bounds written with exponents, and an empty interval.
      expect(await store.count({ range: { timestamp: { gte: -1e-7, lte: 1e21 } } })).toBe(12);
      expect(await store.count({ range: { timestamp: { gte: 6, lte: 3 } } })).toBe(0);
      // With the other conditions, and for delete.
      expect(
        await ids({
          range: { timestamp: { gte: 3 } },
          equals: { bucket_name: 'bucket-a' },
          tagsAny: ['person', 'car'],
        }),
      ).toEqual(['rec-4', 'rec-5']);
      expect(await store.delete({ range: { timestamp: { gte: 15 } } })).toBe(2);
      expect(await store.count({ range: { timestamp: {} } })).toBe(10);
    });

    it('filters with in: a scalar equal to one of, a list containing one of, type included; empty matches nothing', async () => {
      const store = await open();
      await store.insert(corpus());
      await store.insert([
        record(40, { video_id: 'vid-l', labels: ['bus', 'person'], zone: ['north', 2] }),
        record(41, { video_id: 'vid-l', labels: ['car'], zone: 'north' }),
        record(42, { video_id: 'vid-l', labels: [], zone: 2 }),
      ]);
      const ids = async (filter: Parameters<VectorStore['count']>[0]) =>
        (await store.search(vectorFor(1), 20, filter)).map((h) => h.id).sort();
      expect(await ids({ in: { video_id: ['vid-0', 'vid-2'] }, equals: { bucket_name: 'bucket-a' } })).toEqual([
        'rec-0',
        'rec-2',
        'rec-3',
        'rec-5',
      ]);
      expect(await store.count({ in: { priority: [0, 2] } })).toBe(8);
      expect(await store.count({ in: { priority: ['0', '2'] } })).toBe(0);
      expect(await store.count({ in: { frame_id: [1, 4, 99] } })).toBe(2);
      expect(await store.count({ in: { timestamp: [1.5, 3] } })).toBe(2);
      expect(await ids({ in: { tags: ['person'] } })).toEqual(['rec-0', 'rec-4', 'rec-8']);
      expect(await ids({ in: { labels: ['bus', 'car'] } })).toEqual(['rec-40', 'rec-41']);
      // One key holding a list on one record and a scalar on another: both kinds are searched.
      expect(await ids({ in: { zone: ['north'] } })).toEqual(['rec-40', 'rec-41']);
      expect(await ids({ in: { zone: [2] } })).toEqual(['rec-40', 'rec-42']);
      expect(await store.count({ in: { zone: ['2'] } })).toBe(0);
      expect(await store.count({ in: { labels: [] } })).toBe(0);
      expect(await store.count({ in: { never_written: ['x'] } })).toBe(0);
      expect(await store.delete({ in: { labels: ['person'] } })).toBe(1);
      expect(await store.count({ equals: { video_id: 'vid-l' } })).toBe(2);
    });

    it('filters with containsAll on list fields; scalars never match and an empty list does not restrict', async () => {
      const store = await open();
      await store.insert(corpus());
      await store.insert([
        record(50, { video_id: 'vid-l', labels: ['bus', 'person', 'dog'], flags: [1, true, 'x'] }),
        record(51, { video_id: 'vid-l', labels: ['bus'], flags: ['1', 'true'] }),
      ]);
      const ids = async (filter: Parameters<VectorStore['count']>[0]) =>
        (await store.search(vectorFor(1), 20, filter)).map((h) => h.id).sort();
      expect(await ids({ containsAll: { tags: ['person', 'car'] } })).toEqual(['rec-0', 'rec-4', 'rec-8']);
      expect(await ids({ containsAll: { labels: ['bus'] } })).toEqual(['rec-50', 'rec-51']);
      expect(await ids({ containsAll: { labels: ['person', 'bus'] } })).toEqual(['rec-50']);
      expect(await ids({ containsAll: { labels: ['person', 'cat'] } })).toEqual([]);
      expect(await ids({ containsAll: { flags: [1, true] } })).toEqual(['rec-50']);
      expect(await ids({ containsAll: { flags: ['1'] } })).toEqual(['rec-51']);
      expect(await store.count({ containsAll: { video_id: ['vid-l'] } })).toBe(0);
      expect(await store.count({ containsAll: { labels: [] } })).toBe(14);
      expect(
        await ids({ containsAll: { labels: ['bus'] }, in: { labels: ['dog'] }, equals: { video_id: 'vid-l' } }),
      ).toEqual(['rec-50']);
    });

    it('round-trips metadata exactly: lists, nulls, booleans, numbers, unicode and quotes', async () => {
      const store = await open();
      const metadata: Record<string, MetadataValue> = {
        video_id: 'it\'s a "video" \\ id',
        bucket_name: 'bucket-a',
        timestamp: 12.25,
        frame_id: 300,
        tags: ['personne', 'vélo', "o'clock"],
        label: null,
        source_path: '/data/in/clip 1.mp4',
        reviewed: true,
        score_hint: 0.5,
        colors: ['red', 'green'],
        mixed_list: [1, 'two', false],
        'Odd Key-Name': 'kept',
        empty_list: [],
      };
      await store.insert([{ id: 'only', vector: vectorFor(5), metadata }]);
      const [hit] = await store.search(vectorFor(5), 1);
      expect(hit.id).toBe('only');
      expect(hit.metadata).toEqual(metadata);
      const exact = await store.search(vectorFor(5), 1, {
        equals: { video_id: 'it\'s a "video" \\ id', reviewed: true, 'Odd Key-Name': 'kept' },
        tagsAny: ["o'clock"],
      });
      expect(exact.map((h) => h.id)).toEqual(['only']);
    });

    it('treats filter values as data, never as query syntax', async () => {
      const store = await open();
      await store.insert(corpus());
      for (const hostile of ["' OR '1'='1", "vid-0' OR video_id != '", '") OR true --', 'vid-0\u0000']) {
        expect(await store.search(vectorFor(1), 12, { equals: { video_id: hostile } })).toEqual([]);
        expect(await store.count({ equals: { camera: hostile } })).toBe(0);
        expect(await store.delete({ equals: { video_id: hostile } })).toBe(0);
        expect(await store.count({ notEquals: { video_id: hostile } })).toBe(12);
        expect(await store.search(vectorFor(1), 12, { tagsAny: [hostile] })).toEqual([]);
        expect(await store.count({ in: { video_id: [hostile], tags: [hostile] } })).toBe(0);
        expect(await store.count({ containsAll: { tags: [hostile] } })).toBe(0);
        expect(await store.count({ range: { [hostile]: { gte: 0 } } })).toBe(0);
        expect(await store.count({ in: { [hostile]: ['x'] } })).toBe(0);
      }
      expect(await store.count()).toBe(12);
    });

    it('counts and deletes by filter, returning how many went', async () => {
      const store = await open();
      await store.insert(corpus());
      expect(await store.count({ equals: { bucket_name: 'bucket-a' } })).toBe(6);
      expect(await store.count({ equals: { bucket_name: 'bucket-a', video_id: 'vid-1' } })).toBe(2);
      expect(await store.delete({ equals: { bucket_name: 'bucket-a', video_id: 'vid-1' } })).toBe(2);
      expect(await store.count({ equals: { bucket_name: 'bucket-a' } })).toBe(4);
      // rec-4 (person) went with vid-1 already: only rec-0 and rec-8 are left to match.
      expect(await store.delete({ tagsAny: ['person'] })).toBe(2);
      expect(await store.delete({ equals: { video_id: 'nope' } })).toBe(0);
      expect(await store.count()).toBe(8);
      expect(await store.delete({ equals: { bucket_name: 'bucket-b' } })).toBe(5);
      expect(await store.delete({})).toBe(3);
      expect(await store.count()).toBe(0);
    });

    it('rejects vectors of the wrong dimension and malformed filters or metadata', async () => {
      const store = await open();
      await expect(store.insert([{ id: 'x', vector: [1, 2, 3], metadata: {} }])).rejects.toThrow(RangeError);
      await expect(store.search([1, 2], 3)).rejects.toThrow(RangeError);
      await expect(store.search(vectorFor(1), 0)).rejects.toThrow(RangeError);
      await expect(store.count({ equals: { tags: 'car' } })).rejects.toThrow(TypeError);
      await expect(store.delete({ notEquals: { camera: ['a'] as unknown as string } })).rejects.toThrow(TypeError);
      const malformed = [
        { range: { timestamp: { gte: '3' } } },
        { range: { timestamp: { gt: 3 } } },
        { range: { timestamp: { lte: Number.NaN } } },
        { range: { timestamp: 3 } },
        { in: { video_id: 'vid-0' } },
        { in: { video_id: [['nested']] } },
        { containsAll: { tags: [null] } },
        { in: ['video_id'] },
      ] as unknown as Array<Parameters<VectorStore['count']>[0]>;
      for (const filter of malformed) await expect(store.count(filter)).rejects.toThrow(TypeError);
      await expect(store.insert([{ id: 'x', vector: vectorFor(1), metadata: { frame_id: 'seven' } }])).rejects.toThrow(
        TypeError,
      );
      await expect(
        store.insert([{ id: 'x', vector: vectorFor(1), metadata: { nested: { a: 1 } as unknown as MetadataValue } }]),
      ).rejects.toThrow(TypeError);
      expect(await store.count()).toBe(0);
    });

    it('keeps records across close and reopen (when the backend persists locally)', async () => {
      const store = await open();
      if (!fixture?.reopen) return;
      await store.insert(corpus());
      await store.insert([record(99, { video_id: 'late', new_key: 'appears later' })]);
      await store.close();
      const reopened = await fixture.reopen();
      fixture.store = reopened;
      expect(await reopened.count()).toBe(13);
      expect(await reopened.count({ equals: { new_key: 'appears later' } })).toBe(1);
      const [hit] = await reopened.search(vectorFor(99), 1, { equals: { video_id: 'late' } });
      expect(hit).toMatchObject({ id: 'rec-99', metadata: { video_id: 'late', new_key: 'appears later' } });
      expect(await reopened.count({ range: { priority: { gte: 2 } }, containsAll: { tags: ['car'] } })).toBe(2);
    });
  });
}
