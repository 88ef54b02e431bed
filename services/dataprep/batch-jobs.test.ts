import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import sharp from 'sharp';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fixtureImage, makeTestVideo } from '../../test/support/media.js';
import { postForm, postJson } from './testing/http-client.js';
import { TEST_LIMITS } from './testing/harness.js';
import type { BatchJobStatus } from './jobs/ingest-jobs.js';
import { startJobHarness, type JobHarness } from './testing/job-harness.js';
import { nextIncrement } from './testing/next-increment.js';

/** A local image server for URL items: a photo, and 404 for anything else. */
async function startImageServer(jpg: Buffer): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/photo.jpg') res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpg);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** POSTs MP4 files as repeated `files` parts. */
function postFiles(url: string, files: Array<{ bytes: Buffer; filename: string; type?: string }>): Promise<Response> {
  const form = new FormData();
  for (const file of files) {
    form.append('files', new Blob([new Uint8Array(file.bytes)], { type: file.type ?? 'video/mp4' }), file.filename);
  }
  return fetch(url, { method: 'POST', body: form });
}

const noDetection = { enable_object_detection: false };
const noDetectionQuery = 'enable_object_detection=false';
/** A copy of a photo with other bytes (with duplicates disallowed, each test needs content of its own). */
const resized = (image: Buffer) => sharp(image).resize(96).toBuffer();
const byName = (body: BatchJobStatus) => Object.fromEntries(body.items.map((item) => [item.identifier, item]));

describe('dataprep batch jobs on the embedded control plane', () => {
  let h: JobHarness;
  let images: { url: string; close(): Promise<void> };
  let videos: Buffer[];
  let jpg: Buffer;
  let png: Buffer;

  /** Stores `bytes` as the one file of `<bucket>/<videoId>/` (media already in storage). */
  const storeVideo = (bucket: string, videoId: string, bytes: Buffer) =>
    h.objectStore.put(bucket, `${videoId}/clip.mp4`, bytes, { contentType: 'video/mp4' });

  const submit = async (pathname: string, body: unknown) => {
    const res = await postJson(`${h.base}${pathname}`, body);
    const json = await res.json();
    return { status: res.status, body: json };
  };

  const embeddings = async (bucket: string, videoId: string) => {
    const dimension = h.services.models.imageEmbedder.dimension;
    return h.vectorStore.search(new Array(dimension).fill(0.01), 1000, {
      equals: { bucket_name: bucket, video_id: videoId },
    });
  };

  beforeAll(async () => {
    h = await startJobHarness({ env: { MM_DATAPREP_INGEST_DATA_ROOT_HOST: '/mnt/host-media' } });
    videos = [];
    // Distinct content for every test: with duplicates disallowed, identical videos would fail as duplicates.
    for (let n = 0; n < 10; n++) {
      videos.push(await readFile(await makeTestVideo({ seconds: 1, fps: 4, width: 64 + 16 * n, height: 48 })));
    }
    jpg = await readFile(fixtureImage('rocket.jpg'));
    png = await readFile(fixtureImage('chelsea.png'));
    images = await startImageServer(jpg);
  });

  afterAll(async () => {
    await images?.close();
    await h?.close();
  });

  describe('POST /media/process/batch', () => {
    it('processes the listed videos one after another; a missing one fails alone', async () => {
      await storeVideo('batch-existing', 'v1', videos[0]);
      await storeVideo('batch-existing', 'v2', videos[1]);
      const { status, body } = await submit('/media/process/batch', {
        bucket_name: 'batch-existing',
        items: [{ video_id: 'v1' }, { video_id: 'gone' }, { video_id: 'v2' }],
        frame_interval: 2,
        ...noDetection,
      });
      expect(status).toBe(202);
      expect(body).toMatchObject({ status: 'success', accepted: 3 });
      expect(body.job_id).toMatch(/^ingest-[0-9a-f]{32}$/);
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed_with_errors', total: 3, completed: 2, failed: 1 });
      const items = byName(done);
      expect(items.v1).toMatchObject({ video_id: 'v1', status: 'success' });
      expect(items.v1.embeddings_count).toBeGreaterThan(0);
      expect(items.gone).toMatchObject({
        status: 'error',
        message: 'No video found in directory gone of bucket batch-existing',
      });
      expect((await embeddings('batch-existing', 'v1')).length).toBe(items.v1.embeddings_count);
      expect((await embeddings('batch-existing', 'v2')).length).toBe(items.v2.embeddings_count);
    });

    it('fails an item whose content another video owns, and re-processes the owner itself', async () => {
      await storeVideo('batch-dup', 'owner', videos[2]);
      await storeVideo('batch-dup', 'copy', videos[2]);
      const first = await submit('/media/process', { bucket_name: 'batch-dup', video_id: 'owner', ...noDetection });
      expect(first.status).toBe(201);
      const { body } = await submit('/media/process/batch', {
        bucket_name: 'batch-dup',
        items: [{ video_id: 'owner' }, { video_id: 'copy' }],
        ...noDetection,
      });
      const done = await h.waitForJob(body.job_id);
      expect(done.state).toBe('completed_with_errors');
      expect(byName(done).owner.status).toBe('success');
      expect(byName(done).copy).toMatchObject({
        status: 'error',
        message: 'Identical content already exists as video_id owner in bucket batch-dup',
      });
      expect(await embeddings('batch-dup', 'copy')).toHaveLength(0);
    });

    it('fails alone a directory the selector finds whose name is not a video_id', async () => {
      const fresh = (n: number) => makeTestVideo({ seconds: 1, fps: 4, width: 64 + 16 * n, height: 48 });
      await storeVideo('batch-odd', 'cam-ok', await readFile(await fresh(15)));
      await storeVideo('batch-odd', 'made.by.hand', await readFile(await fresh(16)));
      const { status, body } = await submit('/media/process/batch', { bucket_name: 'batch-odd', ...noDetection });
      expect(status).toBe(202);
      expect(body.accepted).toBe(2);
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed_with_errors', completed: 1, failed: 1 });
      expect(byName(done)['made.by.hand']).toEqual({
        identifier: 'made.by.hand',
        status: 'error',
        message: 'Not a valid video_id (a directory made outside the API), so it cannot be processed',
      });
    });

    it('selects the videos of a bucket by prefix', async () => {
      await storeVideo('batch-select', 'cam1-a', videos[3]);
      await storeVideo('batch-select', 'cam2-a', videos[4]);
      const { status, body } = await submit('/media/process/batch', {
        bucket_name: 'batch-select',
        prefix: 'cam1-',
        frame_interval: 4,
        ...noDetection,
      });
      expect(status).toBe(202);
      expect(body.accepted).toBe(1);
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed', completed: 1, items: [{ identifier: 'cam1-a' }] });
    });

    it('answers 404 for a selector that matches nothing and 400 for items with a prefix or neither', async () => {
      expect((await submit('/media/process/batch', { bucket_name: 'batch-select', prefix: 'nope' })).status).toBe(404);
      const both = await submit('/media/process/batch', { items: [{ video_id: 'a' }], prefix: 'a' });
      expect(both.status).toBe(400);
      expect((await submit('/media/process/batch', { frame_interval: 5 })).status).toBe(400);
      expect((await submit('/media/process/batch', { items: [{ video_id: '../x' }] })).status).toBe(400);
    });
  });

  describe('the reserved bucket name jobs', () => {
    it('refuses to create media in a bucket named jobs on every creating endpoint, and stores nothing', async () => {
      const reserved = /Bucket name jobs is reserved/;
      const single = new FormData();
      single.append('file', new Blob([new Uint8Array(jpg)], { type: 'image/jpeg' }), 'a.jpg');
      const upload = await fetch(`${h.base}/media/upload?bucket_name=jobs`, { method: 'POST', body: single });
      expect(upload.status).toBe(400);
      expect((await upload.json()).message).toMatch(reserved);
      const batch = await postFiles(`${h.base}/media/upload/batch?bucket_name=jobs`, [
        { bytes: videos[9], filename: 'x.mp4' },
      ]);
      expect(batch.status).toBe(400);
      expect((await batch.json()).message).toMatch(reserved);
      const image = { type: 'image_base64', image_base64: jpg.toString('base64') };
      for (const [pathname, body] of [
        ['/media/ingest', { ...image, bucket_name: 'jobs' }],
        ['/media/ingest/batch', { images: [image], bucket_name: 'jobs' }],
        ['/media/ingest-dir', { dir_path: '.', bucket_name: 'jobs' }],
      ] as const) {
        const answer = await submit(pathname, body);
        expect(answer).toMatchObject({
          status: 400,
          body: { status: 'error', message: expect.stringMatching(reserved) },
        });
      }
      expect(await h.objectStore.list('jobs', '')).toEqual([]);
    });
  });

  describe('GET and DELETE /media/jobs/{job_id}', () => {
    it('answers 404 for unknown jobs', async () => {
      for (const id of ['ingest-00000000000000000000000000000000', 'Not_A_Name']) {
        const got = await fetch(`${h.base}/media/jobs/${id}`);
        expect(got.status).toBe(404);
        expect(await got.json()).toEqual({ status: 'error', message: `Job ${id} not found` });
        expect((await fetch(`${h.base}/media/jobs/${id}`, { method: 'DELETE' })).status).toBe(404);
      }
    });

    it('cancels a running job: the item in progress finishes, the others are skipped, the job ends cancelled', async () => {
      for (const [i, id] of ['c1', 'c2', 'c3'].entries()) await storeVideo('batch-cancel', id, videos[5 + i]);
      const hold = h.gate.hold('c1');
      const { body } = await submit('/media/process/batch', {
        bucket_name: 'batch-cancel',
        items: [{ video_id: 'c1' }, { video_id: 'c2' }, { video_id: 'c3' }],
        ...noDetection,
      });
      await hold.reached;
      const cancelled = await fetch(`${h.base}/media/jobs/${body.job_id}`, { method: 'DELETE' });
      expect(cancelled.status).toBe(200);
      expect(await cancelled.json()).toMatchObject({ status: 'success', job_id: body.job_id, total: 3 });
      hold.release();
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'cancelled', completed: 1, failed: 0, skipped: 2 });
      expect(byName(done).c1.status).toBe('success');
      expect(byName(done).c2.status).toBe('skipped');
      expect(await embeddings('batch-cancel', 'c3')).toHaveLength(0);
      // A finished job stays as it is.
      const again = await fetch(`${h.base}/media/jobs/${body.job_id}`, { method: 'DELETE' });
      expect(await again.json()).toMatchObject({ state: 'cancelled', skipped: 2 });
    });
  });

  describe('restart', () => {
    it('resumes an interrupted job: finished items are kept, the interrupted one runs again from scratch', async () => {
      const restartVideos = [10, 11, 12].map((n) =>
        makeTestVideo({ seconds: 1, fps: 4, width: 64 + 16 * n, height: 48 }),
      );
      for (const [i, id] of ['r1', 'r2', 'r3'].entries()) {
        await storeVideo('batch-restart', id, await readFile(await restartVideos[i]));
      }
      const hold = h.gate.hold('r2');
      const { body } = await submit('/media/process/batch', {
        bucket_name: 'batch-restart',
        items: [{ video_id: 'r1' }, { video_id: 'r2' }, { video_id: 'r3' }],
        ...noDetection,
      });
      await hold.reached;
      const runsOf = async (id: string) =>
        new Set((await embeddings('batch-restart', id)).map((e) => e.metadata.run_id));
      const r1Runs = await runsOf('r1');
      expect(r1Runs.size).toBe(1);
      await h.restart();
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed', completed: 3 });
      // r1 was not processed again; r2 holds exactly the embeddings of its one complete run.
      expect(await runsOf('r1')).toEqual(r1Runs);
      expect(await runsOf('r2')).toHaveProperty('size', 1);
      expect((await embeddings('batch-restart', 'r2')).length).toBe(byName(done).r2.embeddings_count);
    });
  });

  describe('replacing earlier runs', () => {
    it('removes what an earlier attempt left of the first item an attempt runs', async () => {
      const hold = h.gate.hold('stale.png');
      // A small image of its own (a copy of another test's would end as a duplicate before the pipeline).
      const image = await sharp(await readFile(fixtureImage('astronaut.png')))
        .resize(96)
        .png()
        .toBuffer();
      const { body } = await submit('/media/ingest/batch', {
        bucket_name: 'batch-stale',
        images: [{ type: 'image_base64', image_base64: image.toString('base64'), filename: 'stale.png' }],
        ...noDetection,
      });
      const { videoId } = await hold.reached;
      // What a run killed with -9 leaves behind: records of another run of the same video.
      const dimension = h.services.models.imageEmbedder.dimension;
      await h.vectorStore.insert([
        {
          id: `stale-${videoId}`,
          vector: new Array(dimension).fill(0.5),
          metadata: { bucket_name: 'batch-stale', video_id: videoId, run_id: 'crashed-run', tags: [] },
        },
      ]);
      hold.release();
      const done = await h.waitForJob(body.job_id);
      expect(done.state).toBe('completed');
      const runs = new Set((await embeddings('batch-stale', videoId)).map((e) => e.metadata.run_id));
      expect(runs.size).toBe(1);
      expect(runs.has('crashed-run')).toBe(false);
    });
  });

  describe('POST /media/ingest/batch', () => {
    it('ingests base64 and URL images; a failed download fails only its item', async () => {
      const { status, body } = await submit('/media/ingest/batch', {
        bucket_name: 'batch-images',
        images: [
          { type: 'image_base64', image_base64: png.toString('base64'), filename: 'cat.png' },
          { type: 'image_url', image_url: `${images.url}/photo.jpg` },
          { type: 'image_url', image_url: `${images.url}/missing.jpg` },
        ],
        ...noDetection,
      });
      expect(status).toBe(202);
      expect(body.accepted).toBe(3);
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed_with_errors', completed: 2, failed: 1 });
      const items = byName(done);
      expect(items['cat.png'].status).toBe('success');
      expect(items['photo.jpg'].status).toBe('success');
      expect(items['missing.jpg']).toMatchObject({ status: 'error', message: 'image_url answered HTTP 404' });
      const listed = await (await fetch(`${h.base}/media?bucket_name=batch-images`)).json();
      expect(listed.videos.map((v: { video_name: string }) => v.video_name).sort()).toEqual(['cat.png', 'photo.jpg']);
    });

    it('fails an undecodable item alone: 202, the others ingested, its error and message in the job', async () => {
      const { status, body } = await submit('/media/ingest/batch', {
        bucket_name: 'batch-images-bad',
        images: [
          { type: 'image_base64', image_base64: (await resized(jpg)).toString('base64'), filename: 'good.jpg' },
          { type: 'image_base64', image_base64: Buffer.from('not an image').toString('base64'), filename: 'notes.txt' },
          { type: 'image_base64', image_base64: 'not base64 at all!', filename: 'garbled' },
          { type: 'image_base64', image_base64: (await resized(png)).toString('base64'), filename: 'good.png' },
        ],
        ...noDetection,
      });
      expect(status).toBe(202);
      expect(body).toMatchObject({ accepted: 4 });
      expect(body.message).toMatch(/2 images will be ingested .*; 2 items refused, reported as errors in the job$/);
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed_with_errors', total: 4, completed: 2, failed: 2 });
      const items = byName(done);
      expect(items['notes.txt']).toEqual({
        identifier: 'notes.txt',
        status: 'error',
        message: expect.stringMatching(/^unsupported or undecodable image \(accepted formats: /),
      });
      expect(items.garbled).toMatchObject({ status: 'error', message: 'image_base64 is not valid base64' });
      expect(items['good.jpg'].status).toBe('success');
      expect(items['good.png'].status).toBe('success');
      // Only the two images were stored.
      expect(await h.objectStore.list('batch-images-bad')).toHaveLength(2);
    });

    it('refuses a request none of whose items can be ingested, and keeps nothing', async () => {
      const { status, body } = await submit('/media/ingest/batch', {
        bucket_name: 'batch-images-none',
        images: [{ type: 'image_base64', image_base64: Buffer.from('not an image').toString('base64') }],
      });
      expect(status).toBe(400);
      expect(body.message).toMatch(/^Nothing can be ingested: images\[0\]: unsupported or undecodable image/);
      expect(await h.objectStore.list('batch-images-none')).toEqual([]);
    });

    it('refuses at submit only a request that is itself invalid', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ images: 'not a list' }, /images/],
        [{ images: [] }, /images/],
        [{ images: [{ type: 'image_file', image_base64: 'aGk=' }] }, /type/],
        [{ images: [{ type: 'image_base64', image_base64: 42 }] }, /image_base64/],
        [{ images: [{ type: 'image_url' }] }, /image_url/],
      ];
      for (const [request, message] of cases) {
        const { status, body } = await submit('/media/ingest/batch', request);
        expect(status).toBe(400);
        expect(body.message).toMatch(message);
      }
    });
  });

  describe('POST /media/upload/batch', () => {
    it('stores the MP4 files and embeds them in one job', async () => {
      const res = await postFiles(
        `${h.base}/media/upload/batch?bucket_name=batch-uploads&frame_interval=2&enable_object_detection=false`,
        [
          { bytes: videos[8], filename: 'one.mp4' },
          { bytes: videos[9], filename: 'two.mp4' },
        ],
      );
      expect(res.status).toBe(202);
      const body = await res.json();
      expect(body).toMatchObject({ status: 'success', accepted: 2 });
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed', completed: 2 });
      const listed = await (await fetch(`${h.base}/media?bucket_name=batch-uploads`)).json();
      expect(listed.videos.map((v: { video_name: string }) => v.video_name).sort()).toEqual(['one.mp4', 'two.mp4']);
    });

    it('answers 409 when a file is identical to an ingested video, keeping none of the request', async () => {
      const res = await postFiles(`${h.base}/media/upload/batch?bucket_name=batch-uploads-dup`, [
        { bytes: videos[8], filename: 'fresh-name.mp4' },
        { bytes: videos[1], filename: 'again.mp4' },
      ]);
      expect(res.status).toBe(409);
      expect((await res.json()).message).toMatch(/Identical content already exists as video_id/);
      expect(await h.objectStore.list('batch-uploads-dup')).toEqual([]);
    });

    it('answers 413 for a file over the upload cap and keeps none of the request', async () => {
      const oversized = Buffer.concat([videos[2], Buffer.alloc(TEST_LIMITS.uploadMaxBytes)]);
      const res = await postFiles(`${h.base}/media/upload/batch?bucket_name=batch-uploads-big`, [
        { bytes: videos[0], filename: 'small.mp4' },
        { bytes: oversized, filename: 'big.mp4' },
      ]);
      expect(res.status).toBe(413);
      expect((await res.json()).message).toMatch(/^files\[1\] \(big\.mp4\): file too large/);
      expect(await h.objectStore.list('batch-uploads-big')).toEqual([]);
    });

    it('removes the files it stored when the client goes away mid-request, and counts the abort', async () => {
      const bucket = 'batch-uploads-abort';
      const boundary = '----argus-batch-abort';
      const part = (name: string) =>
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\n` +
            'Content-Type: video/mp4\r\n\r\n',
        );
      const body = Buffer.concat([
        part('first.mp4'),
        videos[6],
        Buffer.from('\r\n'),
        part('second.mp4'),
        videos[7].subarray(0, videos[7].length >> 1),
      ]);
      // Resolves once the first file is in storage; the request is then cut in the middle of the second.
      const store = h.services.objectStore;
      const put = store.put.bind(store);
      const firstStored = new Promise<void>((resolve) => {
        store.put = async (...args: Parameters<typeof put>) => {
          const result = await put(...args);
          if (args[0] === bucket) resolve();
          return result;
        };
      });
      const aborted = nextIncrement(h.services.uploadsAborted);
      const req = http.request(`${h.base}/media/upload/batch?bucket_name=${bucket}`, {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length + 4096 },
      });
      req.on('error', () => undefined);
      req.write(body);
      try {
        await firstStored;
      } finally {
        store.put = put;
      }
      req.destroy();
      // Counted by the handler once it has removed what it stored.
      expect(await aborted).toEqual({ reason: 'client_gone' });
      expect(await h.objectStore.list(bucket)).toEqual([]);
    });

    it('fails a file that is not an MP4 alone: 202, the MP4 embedded, the other not stored', async () => {
      const res = await postFiles(`${h.base}/media/upload/batch?bucket_name=batch-uploads-bad&${noDetectionQuery}`, [
        {
          bytes: await readFile(await makeTestVideo({ seconds: 1, fps: 4, width: 336, height: 48 })),
          filename: 'ok.mp4',
        },
        { bytes: png, filename: 'photo.png', type: 'image/png' },
      ]);
      expect(res.status).toBe(202);
      const body = await res.json();
      expect(body.message).toMatch(/1 file stored .*; 1 item refused, reported as errors in the job$/);
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed_with_errors', completed: 1, failed: 1 });
      expect(byName(done)['photo.png']).toEqual({
        identifier: 'photo.png',
        status: 'error',
        message: 'Unsupported media type: upload/batch accepts MP4 videos only',
      });
      expect(byName(done)['ok.mp4'].status).toBe('success');
      expect(await h.objectStore.list('batch-uploads-bad')).toHaveLength(1);
    });

    it('answers 400 when no file of the request can be embedded, or there is none, keeping nothing', async () => {
      const res = await postFiles(`${h.base}/media/upload/batch?bucket_name=batch-uploads-none`, [
        { bytes: png, filename: 'photo.png', type: 'image/png' },
      ]);
      expect(res.status).toBe(400);
      expect((await res.json()).message).toBe(
        'Nothing can be ingested: photo.png: Unsupported media type: upload/batch accepts MP4 videos only',
      );
      expect(await h.objectStore.list('batch-uploads-none')).toEqual([]);
      const none = await fetch(`${h.base}/media/upload/batch`, { method: 'POST', body: new FormData() });
      expect(none.status).toBe(400);
    });
  });

  describe('POST /media/ingest-dir', () => {
    let lobby: Buffer;

    beforeAll(async () => {
      lobby = await readFile(await makeTestVideo({ seconds: 1, fps: 4, width: 80, height: 64 }));
      const cams = path.join(h.ingestRoot, 'cams');
      await mkdir(path.join(cams, 'meta'), { recursive: true });
      await mkdir(path.join(cams, 'sub'), { recursive: true });
      await writeFile(path.join(cams, 'lobby.mp4'), lobby);
      await writeFile(path.join(cams, 'photo.png'), await readFile(fixtureImage('coffee.png')));
      await writeFile(path.join(cams, 'notes.txt'), 'not media');
      await writeFile(path.join(cams, 'sub', 'deep.jpg'), await readFile(fixtureImage('pexels_double_decker_bus.jpg')));
      await writeFile(
        path.join(cams, 'meta', 'lobby.mp4.json'),
        JSON.stringify({ tags: ['sidecar'], zone: 'sidecar-zone', floor: 3, nested: { no: 1 } }),
      );
      await writeFile(path.join(h.outside, 'secret.jpg'), await readFile(fixtureImage('astronaut.png')));
      await symlink(path.join(h.outside, 'secret.jpg'), path.join(cams, 'escape.jpg'));
      await symlink(h.outside, path.join(h.ingestRoot, 'outside-link'));
    });

    it('ingests the directory: sidecar merged over request metadata, symlink out skipped, meta/ and sub-dirs left', async () => {
      const { status, body } = await submit('/media/ingest-dir', {
        dir_path: 'cams',
        bucket_name: 'dir-bucket',
        frame_interval: 2,
        tags: ['req'],
        metadata: { zone: 'request-zone', site: 'hq', 'bad key': 1 },
        ...noDetection,
      });
      expect(status).toBe(202);
      expect(body.accepted).toBe(2);
      expect(body.warnings.join('\n')).toMatch(/cams\/escape\.jpg: skipped/);
      expect(body.warnings.join('\n')).toMatch(/"bad key" skipped/);
      expect(body.warnings.join('\n')).toMatch(/"nested" skipped/);
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed', completed: 2 });
      const items = byName(done);
      expect(Object.keys(items).sort()).toEqual(['cams/lobby.mp4', 'cams/photo.png']);
      const [frame] = await embeddings('dir-bucket', items['cams/lobby.mp4'].video_id!);
      expect(frame.metadata).toMatchObject({ zone: 'sidecar-zone', site: 'hq', floor: 3 });
      expect(frame.metadata.tags).toEqual(expect.arrayContaining(['req', 'sidecar']));
      expect(frame.metadata.source_path).toBe('/mnt/host-media/cams/lobby.mp4');
      const [image] = await embeddings('dir-bucket', items['cams/photo.png'].video_id!);
      expect(image.metadata).toMatchObject({ zone: 'request-zone', site: 'hq' });
      // User metadata is filterable like the canonical keys.
      expect(await h.vectorStore.count({ equals: { bucket_name: 'dir-bucket', zone: 'sidecar-zone' } })).toBe(
        items['cams/lobby.mp4'].embeddings_count,
      );
    });

    it('fails an item whose file was removed before its turn; the others complete', async () => {
      const dir = path.join(h.ingestRoot, 'vanish');
      await mkdir(dir, { recursive: true });
      for (const [name, n] of [
        ['a.mp4', 13],
        ['b.mp4', 14],
      ] as const) {
        const video = await makeTestVideo({ seconds: 1, fps: 4, width: 64 + 16 * n, height: 48 });
        await writeFile(path.join(dir, name), await readFile(video));
      }
      const hold = h.gate.hold('a.mp4');
      const { body } = await submit('/media/ingest-dir', {
        dir_path: 'vanish',
        bucket_name: 'dir-vanish',
        ...noDetection,
      });
      await hold.reached;
      await rm(path.join(dir, 'b.mp4'));
      hold.release();
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed_with_errors', completed: 1, failed: 1 });
      expect(byName(done)['vanish/b.mp4']).toMatchObject({
        status: 'error',
        message: 'vanish/b.mp4 is no longer a readable file below the ingest data root',
      });
      expect(await h.objectStore.list('dir-vanish')).toHaveLength(1);
    });

    it('refuses the whole request (409) when a file is identical to ingested media', async () => {
      const { status, body } = await submit('/media/ingest-dir', { dir_path: 'cams', recursive: true, ...noDetection });
      expect(status).toBe(409);
      expect(body.message).toMatch(/^cams\/lobby\.mp4: Identical content already exists/);
    });

    it('keeps paths inside the root: traversal, absolute paths and symlinked directories out are 400', async () => {
      for (const dir_path of ['../outside', '/etc', path.join(h.ingestRoot, '..'), 'outside-link', 'missing']) {
        const { status } = await submit('/media/ingest-dir', { dir_path });
        expect(status).toBe(400);
      }
    });

    it('answers 400 for a reserved metadata key in the request; a sidecar with one fails its file alone', async () => {
      const reserved = await submit('/media/ingest-dir', { dir_path: 'cams', metadata: { video_id: 'x' } });
      expect(reserved.status).toBe(400);
      expect(reserved.body.message).toMatch(/reserved metadata keys may not be used: video_id/);
      const dir = path.join(h.ingestRoot, 'reserved');
      await mkdir(path.join(dir, 'meta'), { recursive: true });
      await writeFile(path.join(dir, 'x.jpg'), await readFile(fixtureImage('motorcycle_left.png')));
      await writeFile(path.join(dir, 'meta', 'x.json'), JSON.stringify({ bucket_name: 'evil' }));
      const alone = await submit('/media/ingest-dir', { dir_path: 'reserved' });
      expect(alone.status).toBe(400);
      expect(alone.body.message).toBe(
        'Nothing can be ingested: reserved/x.jpg: The sidecar uses reserved metadata keys: bucket_name',
      );
      await writeFile(path.join(dir, 'y.png'), await resized(await readFile(fixtureImage('coffee.png'))));
      const { status, body } = await submit('/media/ingest-dir', {
        dir_path: 'reserved',
        bucket_name: 'dir-sidecar-reserved',
        ...noDetection,
      });
      expect(status).toBe(202);
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed_with_errors', completed: 1, failed: 1 });
      expect(byName(done)['reserved/x.jpg']).toEqual({
        identifier: 'reserved/x.jpg',
        status: 'error',
        message: 'The sidecar uses reserved metadata keys: bucket_name',
      });
      expect(byName(done)['reserved/y.png'].status).toBe('success');
    });
  });
  describe('referenced media (ingest-dir with store_copy=false)', () => {
    const bucket = 'ref-bucket';
    let a: Buffer;
    let ids: Record<string, string>;

    const listing = async () =>
      (await (await fetch(`${h.base}/media?bucket_name=${bucket}`)).json()).videos as Array<Record<string, unknown>>;

    beforeAll(async () => {
      const ref = path.join(h.ingestRoot, 'ref');
      await mkdir(path.join(ref, 'nested', 'meta'), { recursive: true });
      a = await readFile(fixtureImage('person_multi_det.jpg'));
      await writeFile(path.join(ref, 'a.jpg'), a);
      await writeFile(path.join(ref, 'nested', 'b.png'), await readFile(fixtureImage('motorcycle_left.png')));
      await writeFile(path.join(ref, 'nested', 'meta', 'b.png.json'), JSON.stringify({ tags: ['nested'] }));
      const { status, body } = await submit('/media/ingest-dir', {
        dir_path: 'ref',
        recursive: true,
        store_copy: false,
        bucket_name: bucket,
        ...noDetection,
      });
      expect(status).toBe(202);
      const done = await h.waitForJob(body.job_id);
      expect(done).toMatchObject({ state: 'completed', completed: 2 });
      ids = Object.fromEntries(done.items.map((item) => [item.identifier, item.video_id!]));
    });

    it('lists referenced files with stored:false and their host path, and stores no copy', async () => {
      expect(await listing()).toEqual([
        expect.objectContaining({
          video_id: ids['ref/a.jpg'],
          video_name: 'a.jpg',
          stored: false,
          source_path: '/mnt/host-media/ref/a.jpg',
          video_path: '/mnt/host-media/ref/a.jpg',
        }),
        expect.objectContaining({ video_id: ids['ref/nested/b.png'], stored: false }),
      ]);
      expect(await h.objectStore.list(bucket)).toEqual([]);
      const [hit] = await embeddings(bucket, ids['ref/nested/b.png']);
      expect(hit.metadata.tags).toEqual(['nested']);
    });

    it('downloads from the mount with the same Range semantics', async () => {
      const url = `${h.base}/media/download?bucket_name=${bucket}&video_id=${ids['ref/a.jpg']}`;
      const whole = await fetch(url);
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-type')).toBe('image/jpeg');
      expect(Buffer.from(await whole.arrayBuffer())).toEqual(a);
      const part = await fetch(url, { headers: { range: 'bytes=10-19' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 10-19/${a.length}`);
      expect(Buffer.from(await part.arrayBuffer())).toEqual(a.subarray(10, 20));
      const beyond = await fetch(url, { headers: { range: `bytes=${a.length + 5}-` } });
      expect(beyond.status).toBe(416);
    });

    it('skips files already embedded when the directory is ingested again', async () => {
      const { status, body } = await submit('/media/ingest-dir', {
        dir_path: 'ref',
        recursive: true,
        store_copy: false,
      });
      expect(status).toBe(200);
      expect(body.message).toBe('Nothing to ingest; skipped as already embedded: ref/a.jpg, ref/nested/b.png');
    });

    it('keeps content markers: an upload identical to a referenced file is a duplicate', async () => {
      const res = await postForm(`${h.base}/media/upload?bucket_name=elsewhere`, { bytes: a, filename: 'copy.jpg' });
      expect(res.status).toBe(409);
      expect((await res.json()).message).toBe(
        `Identical content already exists as video_id ${ids['ref/a.jpg']} in bucket ${bucket}`,
      );
    });

    it('omits a moved file from the listing and answers 404 for its download', async () => {
      const from = path.join(h.ingestRoot, 'ref', 'nested', 'b.png');
      await rename(from, path.join(h.outside, 'b.png'));
      await symlink(path.join(h.outside, 'b.png'), from);
      expect((await listing()).map((v) => v.video_id)).toEqual([ids['ref/a.jpg']]);
      const res = await fetch(`${h.base}/media/download?bucket_name=${bucket}&video_id=${ids['ref/nested/b.png']}`);
      expect(res.status).toBe(404);
    });

    it('deletes embeddings and the record, never the file on the mount', async () => {
      const id = ids['ref/a.jpg'];
      expect((await embeddings(bucket, id)).length).toBeGreaterThan(0);
      const res = await fetch(`${h.base}/media/${bucket}/${id}`, { method: 'DELETE' });
      expect(res.status).toBe(200);
      expect(await embeddings(bucket, id)).toHaveLength(0);
      expect(await readFile(path.join(h.ingestRoot, 'ref', 'a.jpg'))).toEqual(a);
      expect(await listing()).toEqual([]);
      const bucketDelete = await fetch(`${h.base}/media/${bucket}`, { method: 'DELETE' });
      expect(bucketDelete.status).toBe(200);
      expect(await embeddings(bucket, ids['ref/nested/b.png'])).toHaveLength(0);
    });
  });
});

describe('dataprep batch jobs without a running worker, batch limit 2', () => {
  let h: JobHarness;
  let video: Buffer;

  beforeAll(async () => {
    h = await startJobHarness({ registerWorker: false, env: { MM_DATAPREP_BATCH_MAX_ITEMS: '2' } });
    video = await readFile(await makeTestVideo({ seconds: 1, fps: 4, width: 64, height: 40 }));
    for (const id of ['p1', 'p2', 'p3']) {
      await h.objectStore.put('pending', `${id}/clip.mp4`, video, { contentType: 'video/mp4' });
    }
  });

  afterAll(async () => {
    await h?.close();
  });

  it('cancels a pending job: every item skipped, the job ends cancelled', async () => {
    const res = await postJson(`${h.base}/media/process/batch`, {
      bucket_name: 'pending',
      items: [{ video_id: 'p1' }, { video_id: 'p2' }],
    });
    const { job_id: jobId } = await res.json();
    const pending = await h.waitForJob(jobId, (body) => body.state === 'pending');
    expect(pending).toMatchObject({ total: 2, completed: 0, items: [] });
    const cancel = await fetch(`${h.base}/media/jobs/${jobId}`, { method: 'DELETE' });
    expect(cancel.status).toBe(200);
    const done = await h.waitForJob(jobId);
    expect(done).toMatchObject({ state: 'cancelled', skipped: 2, completed: 0, failed: 0 });
    expect(done.items.map((item) => item.status)).toEqual(['skipped', 'skipped']);
  });

  it('refuses batches over MM_DATAPREP_BATCH_MAX_ITEMS', async () => {
    const processed = await postJson(`${h.base}/media/process/batch`, { bucket_name: 'pending' });
    expect(processed.status).toBe(400);
    expect((await processed.json()).message).toBe('Too many videos: 3 (a batch holds at most 2)');
    const images = await postJson(`${h.base}/media/ingest/batch`, {
      images: [1, 2, 3].map((n) => ({ type: 'image_url', image_url: `http://127.0.0.1/${n}.jpg` })),
    });
    expect(images.status).toBe(400);
    const files = await postFiles(`${h.base}/media/upload/batch?bucket_name=pending-upload`, [
      { bytes: video, filename: 'a.mp4' },
      { bytes: video, filename: 'b.mp4' },
      { bytes: video, filename: 'c.mp4' },
    ]);
    expect(files.status).toBe(400);
    expect((await files.json()).message).toBe('Too many files: a batch holds at most 2');
    expect(await h.objectStore.list('pending-upload')).toEqual([]);
  });
});
