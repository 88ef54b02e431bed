import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InvalidKeyError, ObjectNotFoundError, ObjectTooLargeError, type ObjectStore } from './object-store.js';

/** How a contract run gets its store: made once per suite; the suite closes the store, then calls `close`. */
export interface ObjectStoreFixture {
  store: ObjectStore;
  close?: () => Promise<void>;
}

const MIB = 1024 * 1024;

/** Deterministic pseudo-random bytes, so a corrupted or reordered byte changes the hash. */
function pattern(size: number, seed = 1): Buffer {
  const out = Buffer.alloc(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** A stream of unknown length made of small chunks, like an HTTP upload; records whether it was destroyed. */
function chunked(data: Buffer, chunkSize = 64 * 1024): Readable & { consumed: () => number } {
  let offset = 0;
  const stream = new Readable({
    read() {
      if (offset >= data.length) return this.push(null);
      this.push(data.subarray(offset, offset + chunkSize));
      offset += chunkSize;
    },
  }) as Readable & { consumed: () => number };
  stream.consumed = () => Math.min(offset, data.length);
  return stream;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** One GET on a connection of its own (no keep-alive pool left open after the test). */
function httpGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = (url.startsWith('https:') ? https : http).get(url, { headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
      response.once('error', reject);
    });
    request.once('error', reject);
  });
}

let bucketCounter = 0;
/** A fresh bucket per test keeps cases independent on a shared server. */
const freshBucket = (): string => `contract-${process.pid}-${++bucketCounter}`;

/** The ObjectStore contract: every adapter must pass it unchanged. */
export function describeObjectStoreContract(name: string, makeStore: () => Promise<ObjectStoreFixture>): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let fixture: ObjectStoreFixture;
    let store: ObjectStore;
    const big = pattern(12 * MIB + 12345, 7);

    beforeAll(async () => {
      fixture = await makeStore();
      store = fixture.store;
    });
    afterAll(async () => {
      await store?.close();
      await fixture?.close?.();
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('round-trips a multi-megabyte stream of unknown length with its sha256 and size', async () => {
      const bucket = freshBucket();
      expect(await store.bucketExists(bucket)).toBe(false);
      const result = await store.put(bucket, 'vid1/video.mp4', chunked(big), { contentType: 'video/mp4' });
      expect(result).toEqual({ key: 'vid1/video.mp4', size: big.length, sha256: sha256(big) });
      expect(await store.bucketExists(bucket)).toBe(true);
      const back = await readAll(await store.get(bucket, 'vid1/video.mp4'));
      expect(back.length).toBe(big.length);
      expect(sha256(back)).toBe(sha256(big));
      const info = await store.stat(bucket, 'vid1/video.mp4');
      expect(info).toMatchObject({ key: 'vid1/video.mp4', size: big.length });
      // Dates from another realm (the SDK, fs) fail toBeInstanceOf under jest's vm, so check the shape instead.
      expect(Number.isFinite(info!.lastModified.getTime())).toBe(true);
    });

    it('stores buffers, overwrites existing keys and keeps empty objects', async () => {
      const bucket = freshBucket();
      await store.put(bucket, 'a/b.txt', Buffer.from('first version'));
      const second = await store.put(bucket, 'a/b.txt', Buffer.from('second'));
      expect(second).toEqual({ key: 'a/b.txt', size: 6, sha256: sha256(Buffer.from('second')) });
      expect((await readAll(await store.get(bucket, 'a/b.txt'))).toString()).toBe('second');
      const empty = await store.put(bucket, 'a/empty', Buffer.alloc(0));
      expect(empty.size).toBe(0);
      expect(empty.sha256).toBe(sha256(Buffer.alloc(0)));
      expect((await readAll(await store.get(bucket, 'a/empty'))).length).toBe(0);
    });

    it('creates a key only when absent: one of ten racing creators wins, the object is whole, others see false', async () => {
      const bucket = freshBucket();
      const key = 'claims/abc.json';
      const bodies = Array.from({ length: 10 }, (_, i) =>
        Buffer.from(JSON.stringify({ racer: i, pad: 'x'.repeat(i) })),
      );
      const results = await Promise.all(bodies.map((body) => store.putIfAbsent(bucket, key, body)));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = bodies[results.indexOf(true)];
      expect((await readAll(await store.get(bucket, key))).equals(winner)).toBe(true);
      // Taken stays taken, also for one more try.
      expect(await store.putIfAbsent(bucket, key, Buffer.from('late'))).toBe(false);
      expect((await readAll(await store.get(bucket, key))).equals(winner)).toBe(true);
      // Removing it releases the key; a listing shows the one object and no temp files.
      expect((await store.list(bucket)).map((o) => o.key)).toEqual([key]);
      expect(await store.deletePrefix(bucket, key)).toBe(1);
      expect(await store.putIfAbsent(bucket, key, Buffer.from('again'), { contentType: 'application/json' })).toBe(
        true,
      );
      expect((await readAll(await store.get(bucket, key))).toString()).toBe('again');
      await expect(store.putIfAbsent(bucket, '../escape.json', Buffer.from('x'))).rejects.toThrow(InvalidKeyError);
      await expect(store.putIfAbsent('../etc', key, Buffer.from('x'))).rejects.toThrow(InvalidKeyError);
    });

    describe('ranged get', () => {
      const bucket = freshBucket();
      const data = pattern(300_000, 3);
      beforeAll(async () => {
        await store.put(bucket, 'clip/data.bin', data);
      });

      it('returns exactly the inclusive start-end bytes', async () => {
        const part = await readAll(await store.get(bucket, 'clip/data.bin', { start: 1000, end: 70_999 }));
        expect(part.equals(data.subarray(1000, 71_000))).toBe(true);
        const one = await readAll(await store.get(bucket, 'clip/data.bin', { start: 5, end: 5 }));
        expect(one.equals(data.subarray(5, 6))).toBe(true);
      });

      it('returns start to end of object, clamping an end past the last byte', async () => {
        const tail = await readAll(await store.get(bucket, 'clip/data.bin', { start: 299_000, end: data.length - 1 }));
        expect(tail.equals(data.subarray(299_000))).toBe(true);
        const clamped = await readAll(await store.get(bucket, 'clip/data.bin', { start: 299_990, end: 10_000_000 }));
        expect(clamped.equals(data.subarray(299_990))).toBe(true);
      });

      it('rejects a range starting past the object and malformed ranges', async () => {
        await expect(store.get(bucket, 'clip/data.bin', { start: data.length, end: data.length + 10 })).rejects.toThrow(
          RangeError,
        );
        await expect(store.get(bucket, 'clip/data.bin', { start: 10, end: 5 })).rejects.toThrow(RangeError);
        await expect(store.get(bucket, 'clip/data.bin', { start: -1, end: 5 })).rejects.toThrow(RangeError);
      });
    });

    it('reports missing objects: stat undefined, get ObjectNotFoundError, list of a missing bucket empty', async () => {
      const bucket = freshBucket();
      expect(await store.stat(bucket, 'nope/x.bin')).toBeUndefined();
      await expect(store.get(bucket, 'nope/x.bin')).rejects.toThrow(ObjectNotFoundError);
      expect(await store.list(bucket)).toEqual([]);
      expect(await store.deletePrefix(bucket, 'nope/')).toBe(0);
      await store.put(bucket, 'there/x.bin', Buffer.from('x'));
      expect(await store.stat(bucket, 'nope/x.bin')).toBeUndefined();
      expect(await store.stat(bucket, 'there')).toBeUndefined();
      await expect(store.get(bucket, 'there/y.bin')).rejects.toThrow(ObjectNotFoundError);
    });

    it('aborts a stream past maxBytes with ObjectTooLargeError, stops reading and leaves no object', async () => {
      const bucket = freshBucket();
      const limit = 9 * MIB;
      const source = chunked(big);
      await expect(store.put(bucket, 'vid/too-big.mp4', source, { maxBytes: limit })).rejects.toThrow(
        ObjectTooLargeError,
      );
      expect(source.destroyed).toBe(true);
      // Stops near the limit instead of draining the body: at most the limit plus the stream's read-ahead.
      expect(source.consumed()).toBeLessThan(limit + 2 * MIB);
      expect(await store.stat(bucket, 'vid/too-big.mp4')).toBeUndefined();
      expect(await store.list(bucket)).toEqual([]);

      await expect(store.put(bucket, 'vid/small.bin', Buffer.alloc(11), { maxBytes: 10 })).rejects.toThrow(
        ObjectTooLargeError,
      );
      await expect(store.put(bucket, 'vid/small.bin', chunked(Buffer.alloc(11), 4), { maxBytes: 10 })).rejects.toThrow(
        ObjectTooLargeError,
      );
      expect(await store.list(bucket)).toEqual([]);
      const exact = await store.put(bucket, 'vid/exact.bin', chunked(Buffer.alloc(10), 3), { maxBytes: 10 });
      expect(exact.size).toBe(10);
    });

    it('passes a failing body error through unchanged and leaves no object', async () => {
      const bucket = freshBucket();
      const failure = new Error('client went away');
      let sent = 0;
      const body = new Readable({
        read() {
          if (sent++ < 3) this.push(Buffer.alloc(64 * 1024, 1));
          else this.destroy(failure);
        },
      });
      await expect(store.put(bucket, 'v/partial.bin', body)).rejects.toBe(failure);
      expect(await store.stat(bucket, 'v/partial.bin')).toBeUndefined();
    });

    it('keeps the previous object when an overwrite is too large', async () => {
      const bucket = freshBucket();
      await store.put(bucket, 'v/keep.bin', Buffer.from('original'));
      await expect(store.put(bucket, 'v/keep.bin', chunked(pattern(5000)), { maxBytes: 100 })).rejects.toThrow(
        ObjectTooLargeError,
      );
      expect((await readAll(await store.get(bucket, 'v/keep.bin'))).toString()).toBe('original');
    });

    it('lists by prefix, sorted by key, telling vid1/ from vid10/', async () => {
      const bucket = freshBucket();
      for (const key of [
        'vid10/a.mp4',
        'vid1/frames/000002.jpg',
        'vid1/b.mp4',
        'vid1/frames/000001.jpg',
        'other.txt',
      ]) {
        await store.put(bucket, key, Buffer.from(key));
      }
      const keys = async (prefix?: string) => (await store.list(bucket, prefix)).map((o) => o.key);
      expect(await keys()).toEqual([
        'other.txt',
        'vid1/b.mp4',
        'vid1/frames/000001.jpg',
        'vid1/frames/000002.jpg',
        'vid10/a.mp4',
      ]);
      expect(await keys('vid1/')).toEqual(['vid1/b.mp4', 'vid1/frames/000001.jpg', 'vid1/frames/000002.jpg']);
      expect(await keys('vid1')).toHaveLength(4);
      expect(await keys('vid1/frames/000001')).toEqual(['vid1/frames/000001.jpg']);
      expect(await keys('missing/')).toEqual([]);
      const [first] = await store.list(bucket, 'vid1/b.mp4');
      expect(first).toMatchObject({ key: 'vid1/b.mp4', size: 'vid1/b.mp4'.length });
    });

    it('lists a page: at most `limit` keys sorting after `startAfter`, in key order', async () => {
      const bucket = freshBucket();
      // No key where '-' or '.' competes with '/' at the same place: s3rver walks its directories and sorts those
      // after '/', where S3 (UTF-8 byte order) sorts them before.
      const keys = ['a.txt', 'vid1/b.mp4', 'vid1/frames/1.jpg', 'vid1x/c.mp4', 'vid10/a.mp4', 'vid2/d.mp4', 'z'];
      for (const key of keys) await store.put(bucket, key, Buffer.from(key));
      const page = async (prefix: string, limit?: number, startAfter?: string) =>
        (await store.list(bucket, prefix, { limit, startAfter })).map((o) => o.key);
      const sorted = [...keys].sort();
      expect(await page('', 3)).toEqual(sorted.slice(0, 3));
      // Walking page by page visits every key once, in order.
      const walked: string[] = [];
      for (let after = '', round = 0; round < keys.length + 1; round++) {
        const next = await page('', 2, after);
        walked.push(...next);
        if (next.length < 2) break;
        after = next[next.length - 1];
      }
      expect(walked).toEqual(sorted);
      // Starting after `vid1` + '0' ('/' + 1) skips every key below vid1/ and nothing else.
      expect(await page('', 2, 'vid10')).toEqual(['vid10/a.mp4', 'vid1x/c.mp4']);
      expect(await page('', 10, 'vid1/frames/1.jpg')).toEqual(['vid10/a.mp4', 'vid1x/c.mp4', 'vid2/d.mp4', 'z']);
      expect(await page('vid1/', 10, 'vid1/b.mp4')).toEqual(['vid1/frames/1.jpg']);
      expect(await page('', 5, 'zz')).toEqual([]);
      await expect(store.list(bucket, '', { limit: 0 })).rejects.toThrow(RangeError);
      await expect(store.list(bucket, '', { startAfter: 'a\u0000' })).rejects.toThrow(InvalidKeyError);
    });

    it('lists and deletes more than 1000 objects (pagination, batched deletes)', async () => {
      const bucket = freshBucket();
      const total = 1005;
      const keys = Array.from({ length: total }, (_, i) => `many/${String(i).padStart(5, '0')}.txt`);
      for (let i = 0; i < keys.length; i += 100) {
        await Promise.all(keys.slice(i, i + 100).map((key) => store.put(bucket, key, Buffer.from('x'))));
      }
      await store.put(bucket, 'keep/one.txt', Buffer.from('y'));
      const listed = await store.list(bucket, 'many/');
      expect(listed.map((o) => o.key)).toEqual(keys);
      // A page larger than one S3 listing request, starting mid-way.
      const page = await store.list(bucket, 'many/', { limit: 1002, startAfter: keys[2] });
      expect(page.map((o) => o.key)).toEqual(keys.slice(3, 1005));
      expect(await store.deletePrefix(bucket, 'many/')).toBe(total);
      expect(await store.list(bucket, 'many/')).toEqual([]);
      expect((await store.list(bucket)).map((o) => o.key)).toEqual(['keep/one.txt']);
    });

    it('deletePrefix removes exactly the prefix and returns the count; "" clears the bucket', async () => {
      const bucket = freshBucket();
      for (const key of ['v1/a', 'v1/sub/b', 'v10/c', 'v2/d']) await store.put(bucket, key, Buffer.from(key));
      expect(await store.deletePrefix(bucket, 'v1/')).toBe(2);
      expect((await store.list(bucket)).map((o) => o.key)).toEqual(['v10/c', 'v2/d']);
      expect(await store.stat(bucket, 'v1/sub/b')).toBeUndefined();
      // A key may reuse a deleted prefix as an object name afterwards.
      await store.put(bucket, 'v1', Buffer.from('now a file'));
      expect(await store.deletePrefix(bucket, '')).toBe(3);
      expect(await store.list(bucket)).toEqual([]);
      expect(await store.bucketExists(bucket)).toBe(true);
    });

    it('hands out the stored file itself where it keeps files, and nothing where it does not', async () => {
      const bucket = freshBucket();
      const data = pattern(200_000, 5);
      await store.put(bucket, 'vid/clip.mp4', chunked(data));
      const file = await store.localPath(bucket, 'vid/clip.mp4');
      if (store.hasLocalFiles) {
        expect(sha256(await readFile(file!))).toBe(sha256(data));
        await expect(store.localPath(bucket, 'vid/missing.mp4')).rejects.toThrow(ObjectNotFoundError);
        // A put to the same key replaces the file the path names.
        await store.put(bucket, 'vid/clip.mp4', Buffer.from('new'));
        expect((await readFile((await store.localPath(bucket, 'vid/clip.mp4'))!)).toString()).toBe('new');
      } else {
        expect(file).toBeUndefined();
      }
      await expect(store.localPath(bucket, '../escape.mp4')).rejects.toThrow(InvalidKeyError);
      await expect(store.localPath('../etc', 'vid/clip.mp4')).rejects.toThrow(InvalidKeyError);
    });

    it('hands out a signed URL that serves ranges where it keeps no files, and none where it does', async () => {
      const bucket = freshBucket();
      const data = pattern(100_000, 9);
      await store.put(bucket, 'vid/clip.mp4', data);
      const url = await store.signedGetUrl(bucket, 'vid/clip.mp4', 60);
      if (store.hasLocalFiles) {
        expect(url).toBeUndefined();
      } else {
        const whole = await httpGet(url!);
        expect(sha256(whole.body)).toBe(sha256(data));
        const part = await httpGet(url!, { range: 'bytes=1000-1999' });
        expect(part.status).toBe(206);
        expect(part.body).toEqual(data.subarray(1000, 2000));
      }
      await expect(store.signedGetUrl(bucket, '../escape.mp4', 60)).rejects.toThrow(InvalidKeyError);
    });

    describe('rejects unsafe names before touching storage', () => {
      const badKeys = [
        '../escape.txt',
        'a/../../escape.txt',
        'a/..',
        '..',
        '/etc/passwd',
        'a\\..\\b',
        'a//b',
        './a',
        'a/./b',
        'nul\u0000byte',
        'line\nbreak',
        '',
        'x'.repeat(1025),
      ];
      const badBuckets = [
        '',
        'ab',
        'UPPER',
        'under_score',
        '-start',
        'end-',
        '../etc',
        'a/b',
        'a..b',
        '1.2.3.4',
        'x'.repeat(64),
      ];

      it.each(badKeys)('key %j', async (key) => {
        const bucket = freshBucket();
        await expect(store.put(bucket, key, Buffer.from('x'))).rejects.toThrow(InvalidKeyError);
        await expect(store.get(bucket, key)).rejects.toThrow(InvalidKeyError);
        await expect(store.stat(bucket, key)).rejects.toThrow(InvalidKeyError);
        expect(await store.bucketExists(bucket)).toBe(false);
      });

      it.each(badBuckets)('bucket %j', async (bucket) => {
        await expect(store.put(bucket, 'k.txt', Buffer.from('x'))).rejects.toThrow(InvalidKeyError);
        await expect(store.get(bucket, 'k.txt')).rejects.toThrow(InvalidKeyError);
        await expect(store.list(bucket)).rejects.toThrow(InvalidKeyError);
        await expect(store.deletePrefix(bucket, '')).rejects.toThrow(InvalidKeyError);
        await expect(store.bucketExists(bucket)).rejects.toThrow(InvalidKeyError);
      });

      it('traversal prefixes for list and deletePrefix', async () => {
        const bucket = freshBucket();
        await expect(store.list(bucket, '../')).rejects.toThrow(InvalidKeyError);
        await expect(store.deletePrefix(bucket, '../other-bucket/')).rejects.toThrow(InvalidKeyError);
        await expect(store.deletePrefix(bucket, '/')).rejects.toThrow(InvalidKeyError);
      });

      it('accepts keys with spaces, unicode and dots inside names', async () => {
        const bucket = freshBucket();
        const key = 'vidéo 1/frame..01 (copy).jpg';
        await store.put(bucket, key, Buffer.from('ok'));
        expect((await readAll(await store.get(bucket, key))).toString()).toBe('ok');
        expect((await store.list(bucket)).map((o) => o.key)).toEqual([key]);
      });
    });
  });
}
