import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../lib/log/index.js';
import { LocalObjectStore, S3ObjectStore, type ObjectStore } from '../../lib/storage/index.js';
import { startS3rver, type S3rverHandle } from '../../lib/storage/testing/s3rver-server.js';
import { startDataprepOver } from '../testing/app-over-store.js';

const BUCKET = 'listing';
const logger = createLogger({ service: 'catalogue-test', level: 'error', json: true });
logger.silent = true;

/** The real store, with every `list` call of the media bucket recorded (prefix, page size) on the way through. */
function recordingLists(store: ObjectStore, calls: Array<{ prefix: string; limit?: number }>): ObjectStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      if (name === 'list') {
        return (bucket: string, prefix = '', options?: { limit?: number }) => {
          if (bucket === BUCKET) calls.push({ prefix, limit: options?.limit });
          return target.list(bucket, prefix, options);
        };
      }
      const value = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const backends: Array<[string, () => Promise<{ store: ObjectStore; stop(): Promise<void> }>]> = [
  [
    'local',
    async () => {
      const root = await mkdtemp(path.join(os.tmpdir(), 'catalogue-local-'));
      return { store: new LocalObjectStore(root), stop: () => rm(root, { recursive: true, force: true }) };
    },
  ],
  [
    's3 (s3rver)',
    async () => {
      const s3: S3rverHandle = await startS3rver();
      const store = new S3ObjectStore(s3.storeConfig);
      return {
        store,
        stop: async () => {
          await store.close();
          await s3.stop();
        },
      };
    },
  ],
];

describe.each(backends)('media lookups and listing pages on %s storage', (_name, open) => {
  let backend: Awaited<ReturnType<typeof open>>;
  let dataDir: string;
  let app: Awaited<ReturnType<typeof startDataprepOver>>;
  const calls: Array<{ prefix: string; limit?: number }> = [];
  // Seven videos, one with a second (non-media, deeper) object, plus keys that are no media at all.
  const videos = ['v01', 'v02', 'v03', 'v04', 'v05', 'v06', 'v07'];
  let base: string;

  beforeAll(async () => {
    backend = await open();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalogue-'));
    for (const id of videos) await backend.store.put(BUCKET, `${id}/clip-${id}.mp4`, Buffer.from(id));
    await backend.store.put(BUCKET, 'v03/extra/frame.jpg', Buffer.from('not media'));
    await backend.store.put(BUCKET, 'readme.txt', Buffer.from('not media'));
    app = await startDataprepOver(recordingLists(backend.store, calls), dataDir, logger);
    base = `${app.server.url}/v1/dataprep`;
  });
  afterAll(async () => {
    await app?.close();
    await backend?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('download and delete look the video up in its own directory, never by listing the bucket', async () => {
    calls.length = 0;
    const download = await fetch(`${base}/media/download?bucket_name=${BUCKET}&video_id=v05`);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('v05');
    const deleted = await fetch(`${base}/media/${BUCKET}/v07`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(calls.map((c) => c.prefix)).toEqual(expect.arrayContaining(['v05/', 'v07/']));
    expect(calls.filter((c) => !c.prefix.startsWith('v05/') && !c.prefix.startsWith('v07/'))).toEqual([]);
    await backend.store.put(BUCKET, 'v07/clip-v07.mp4', Buffer.from('v07'));
  });

  it('GET /media keeps its contract without limit: every video, oldest first, no token', async () => {
    const body = await (await fetch(`${base}/media?bucket_name=${BUCKET}`)).json();
    expect(body.videos.map((v: { video_id: string }) => v.video_id).sort()).toEqual(videos);
    expect(body).not.toHaveProperty('next_page_token');
  });

  it('GET /media with limit pages through in video_id order, reading storage a page at a time', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    calls.length = 0;
    for (let round = 0; round < videos.length; round++) {
      const query = new URLSearchParams({ bucket_name: BUCKET, limit: '3', ...(token ? { page_token: token } : {}) });
      const res = await fetch(`${base}/media?${query}`);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.videos.length).toBeLessThanOrEqual(3);
      seen.push(...body.videos.map((v: { video_id: string }) => v.video_id));
      token = body.next_page_token;
      if (!token) break;
    }
    expect(seen).toEqual(videos);
    // Never an unbounded listing of the bucket.
    expect(calls.every((c) => c.limit !== undefined && c.limit <= 4)).toBe(true);
  });

  it('answers 400 for a page_token it did not hand out, or one without limit', async () => {
    const forged = await fetch(`${base}/media?bucket_name=${BUCKET}&limit=2&page_token=Li4vZXRj`);
    expect(forged.status).toBe(400);
    expect(await forged.json()).toEqual({ status: 'error', message: 'Invalid page_token' });
    const alone = await fetch(`${base}/media?bucket_name=${BUCKET}&page_token=djAx`);
    expect(alone.status).toBe(400);
    expect((await fetch(`${base}/media?bucket_name=${BUCKET}&limit=0`)).status).toBe(400);
  });
});
