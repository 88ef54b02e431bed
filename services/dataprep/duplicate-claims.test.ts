import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { fixtureImage } from '../../test/support/media.js';
import { LocalObjectStore, S3ObjectStore, type ObjectStore } from '../lib/storage/index.js';
import { startS3rver, type S3rverHandle } from '../lib/storage/testing/s3rver-server.js';
import { failingInserts } from './testing/failing-inserts.js';
import { duplicateMessage } from './errors.js';
import { postForm } from './testing/http-client.js';
import { startHarness, type Harness } from './testing/harness.js';

/** Where each backend's test store comes from. */
interface Backend {
  name: string;
  open(): Promise<ObjectStore>;
  stop(): Promise<void>;
}

let localRoot: string | undefined;
let s3: S3rverHandle | undefined;

const BACKENDS: Backend[] = [
  {
    name: 'local',
    async open() {
      localRoot = await mkdtemp(path.join(os.tmpdir(), 'dataprep-claims-'));
      return new LocalObjectStore(path.join(localRoot, 'media'));
    },
    stop: async () => {
      if (localRoot) await rm(localRoot, { recursive: true, force: true });
    },
  },
  {
    // s3rver is taught S3's If-None-Match on PUT (testing/s3rver-conditional-put.mjs): it ignores the header itself.
    name: 's3 (s3rver)',
    async open() {
      s3 = await startS3rver();
      return new S3ObjectStore(s3.storeConfig);
    },
    stop: async () => {
      await s3?.stop();
    },
  },
];

/**
 * The duplicate policy under concurrency (MM_DATAPREP_ALLOW_DUPLICATE_UPLOADS=false): the content hash is claimed
 * with the store's create-if-absent, so identical uploads sent at once give exactly one 201; a failed winner gives
 * its claim back; a claim left by a crashed run is taken over after the claim time-out, by one upload only.
 */
describe.each(BACKENDS)('duplicate claims on $name storage', (backend) => {
  let h: Harness;
  let photo: Buffer;
  let sha256: string;
  let n = 0;
  // A fresh bucket per test, so that each judges only its own uploads.
  const freshBucket = () => `claims-${++n}`;
  const upload = (base: string, bucket: string) =>
    postForm(`${base}/media/upload?bucket_name=${bucket}&enable_object_detection=false`, {
      bytes: photo,
      filename: 'bus.jpg',
    });
  const uploadTenAtOnce = async (base: string, bucket: string) => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => upload(base, bucket)));
    return Promise.all(responses.map(async (r) => ({ status: r.status, body: await r.json() })));
  };
  const storedVideos = async (bucket: string) =>
    [...new Set((await h.objectStore.list(bucket)).map((o) => o.key.split('/')[0]))].sort();

  beforeAll(async () => {
    h = await startHarness(await backend.open());
    photo = await sharp(fixtureImage('pexels_double_decker_bus.jpg')).resize(200).jpeg().toBuffer();
    sha256 = createHash('sha256').update(photo).digest('hex');
  });

  afterAll(async () => {
    await h?.close();
    await backend.stop();
  });

  const remove = async (bucket: string, videoId: string) =>
    expect((await fetch(`${h.base}/media/${bucket}/${videoId}`, { method: 'DELETE' })).status).toBe(200);

  it('ten identical uploads at once: one 201, nine 409 naming the winner, only the winner kept', async () => {
    const bucket = freshBucket();
    const answers = await uploadTenAtOnce(h.base, bucket);
    const winners = answers.filter((a) => a.status === 201);
    expect(winners).toHaveLength(1);
    const winner = winners[0].body.video_id as string;
    const losers = answers.filter((a) => a.status !== 201);
    expect(losers).toHaveLength(9);
    for (const loser of losers) {
      expect(loser).toEqual({ status: 409, body: { status: 'error', message: duplicateMessage(bucket, winner) } });
    }
    expect(await storedVideos(bucket)).toEqual([winner]);
    expect(await h.vectorStore.count({ equals: { bucket_name: bucket } })).toBe(1);
    expect(await h.services.markers.find(sha256)).toMatchObject({
      bucket_name: bucket,
      video_id: winner,
      state: 'owned',
    });
    await remove(bucket, winner);
    expect(await h.services.markers.find(sha256)).toBeUndefined();
  });

  it('a failed winner releases its claim, and a retry wins', async () => {
    const bucket = freshBucket();
    const failing = await h.variant({ vectorStore: failingInserts(h.vectorStore) });
    const answers = await uploadTenAtOnce(`${failing.url}/v1/dataprep`, bucket);
    // Whoever won failed (502) and gave the claim back; a racer that came later may have won and failed in turn.
    expect(answers.some((a) => a.status === 502)).toBe(true);
    for (const answer of answers) expect([409, 502]).toContain(answer.status);
    expect(await h.services.markers.find(sha256)).toBeUndefined();
    expect(await storedVideos(bucket)).toEqual([]);

    const retry = await upload(h.base, bucket);
    expect(retry.status).toBe(201);
    const { video_id: videoId } = await retry.json();
    expect(await storedVideos(bucket)).toEqual([videoId]);
    await remove(bucket, videoId);
  });

  it('a claim left by a crashed run holds until the claim time-out, then one upload of ten takes it over', async () => {
    const bucket = freshBucket();
    // What a crash mid-run leaves: the stored upload and its claim, never completed.
    const crashedId = '00000000-0000-4000-8000-000000000001';
    await h.objectStore.put(bucket, `${crashedId}/bus.jpg`, photo, { contentType: 'image/jpeg' });
    const claim = { sha256, bucket_name: bucket, video_id: crashedId, filename: 'bus.jpg' };
    expect(await h.services.markers.create({ ...claim, created_at: new Date().toISOString() })).toBe(true);

    const blocked = await upload(h.base, bucket);
    expect(blocked.status).toBe(409);
    expect((await blocked.json()).message).toBe(duplicateMessage(bucket, crashedId));

    // The same claim, made longer ago than MM_DATAPREP_DUPLICATE_CLAIM_TIMEOUT_SECONDS (default one hour).
    const longAgo = new Date(Date.now() - (h.config.duplicateClaimTimeoutMs + 60_000)).toISOString();
    const stale = { ...claim, created_at: longAgo, state: 'claimed' };
    await h.objectStore.put(h.config.markerBucket, `sha256/${sha256}.json`, Buffer.from(JSON.stringify(stale)));

    const answers = await uploadTenAtOnce(h.base, bucket);
    const winners = answers.filter((a) => a.status === 201);
    expect(winners).toHaveLength(1);
    const winner = winners[0].body.video_id as string;
    for (const loser of answers.filter((a) => a.status !== 201)) {
      expect(loser).toEqual({ status: 409, body: { status: 'error', message: duplicateMessage(bucket, winner) } });
    }
    expect(await h.services.markers.find(sha256)).toMatchObject({ video_id: winner, state: 'owned' });
    // The crashed run's upload is left as it was: only its claim was taken.
    expect(await storedVideos(bucket)).toEqual([crashedId, winner].sort());
    await remove(bucket, winner);
    await remove(bucket, crashedId);
  });
});
