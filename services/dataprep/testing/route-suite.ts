import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fixtureImage, makeCorruptMp4, makeTestVideo } from '../../../test/support/media.js';
import { failingInserts } from './failing-inserts.js';
import { INTERNAL_ERROR_MESSAGE, STORAGE_UNAVAILABLE_MESSAGE } from '../errors.js';
import { formFile, postForm, postJson, rawMultipartUpload } from './http-client.js';
import { startHarness, TEST_LIMITS, type Harness, type StorageBackendFixture } from './harness.js';

/** An image server for URL ingest: real photos, a PNG labelled JPEG, slow, oversized, non-image and redirects. */
async function startImageServer(png: Buffer, jpg: Buffer): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    switch (req.url) {
      case '/photo.jpg':
        res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpg);
        return;
      case '/mislabelled.jpg':
        res.writeHead(200, { 'content-type': 'image/jpeg' }).end(png);
        return;
      case '/slow.jpg':
        // Headers at once, then the body trickles slower than the download time bound allows.
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.write(jpg.subarray(0, 100));
        return;
      case '/huge.jpg': {
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        // No Content-Length: the cap has to be enforced while streaming.
        const chunk = Buffer.concat([jpg.subarray(0, 4), Buffer.alloc(64 * 1024, 7)]);
        let sent = 0;
        const pump = () => {
          while (sent < TEST_LIMITS.ingestMaxBytes * 4) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
        return;
      }
      case '/page.html':
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>not an image</body></html>');
        return;
      case '/redirect':
        res.writeHead(302, { location: '/photo.jpg' }).end();
        return;
      case '/redirect-ftp':
        res.writeHead(302, { location: 'ftp://127.0.0.1/photo.jpg' }).end();
        return;
      case '/loop':
        res.writeHead(302, { location: '/loop' }).end();
        return;
      default:
        res.writeHead(404).end();
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const byVideo = (bucket: string, videoId: string) => ({ equals: { bucket_name: bucket, video_id: videoId } });

/**
 * The dataprep route suite, run once per storage backend (LanceDB vectors in both): every endpoint of the
 * synchronous surface on real media, real models and a real store.
 */
export function describeDataprepRoutes(backend: StorageBackendFixture): void {
  describe(`dataprep routes on ${backend.name} storage`, () => {
    let h: Harness;
    let images: { url: string; close(): Promise<void> };
    let videoFile: string;
    let videoBytes: Buffer;
    let pngBytes: Buffer;
    let jpgBytes: Buffer;
    const bucket = 'route-tests';

    const upload = (file: Parameters<typeof postForm>[1], query = '') =>
      postForm(`${h.base}/media/upload?bucket_name=${bucket}${query}`, file);

    beforeAll(async () => {
      h = await startHarness(await backend.open());
      videoFile = await makeTestVideo({ seconds: 2, fps: 10, width: 160, height: 120 });
      videoBytes = await readFile(videoFile);
      pngBytes = await readFile(fixtureImage('chelsea.png'));
      jpgBytes = await readFile(fixtureImage('rocket.jpg'));
      const busJpg = await readFile(fixtureImage('pexels_double_decker_bus.jpg'));
      const derivedPng = await sharp(busJpg).resize(320).png().toBuffer();
      images = await startImageServer(derivedPng, busJpg);
    });

    afterAll(async () => {
      await images?.close();
      await h?.close();
      await backend.stop();
    });

    describe('health', () => {
      it('reports the preloaded models, backends and default bucket', async () => {
        const res = await fetch(`${h.base}/health`);
        expect(res.status).toBe(200);
        const body = await res.json();
        expect(body).toMatchObject({
          status: 'ok',
          embedding_client_status: 'preloaded',
          model_name: 'mobilenet-v2-1.4-feature-vector',
          embedding_device: 'cpu',
          use_openvino: false,
          detection_model: 'centernet-mobilenetv3-coco',
          detection_device: 'cpu',
          vectordb_backend: 'lancedb',
          vectordb_status: 'ok',
          storage_backend: h.objectStore.backend,
          default_bucket_name: 'argus-media',
          search_mode: 'descriptions',
        });
      });
    });

    describe('upload, listing and download', () => {
      let videoId: string;

      it('stores an MP4, embeds every Nth frame and lists it', async () => {
        const res = await upload(
          await formFile(videoFile, 'clip.mp4', 'video/mp4'),
          '&frame_interval=5&tags=a,b&enable_object_detection=false',
        );
        expect(res.status).toBe(201);
        const body = await res.json();
        expect(body.status).toBe('success');
        videoId = body.video_id;
        expect(videoId).toMatch(/^[0-9a-f-]{36}$/);
        // 20 frames, every 5th: frames 0, 5, 10, 15.
        expect(await h.vectorStore.count(byVideo(bucket, videoId))).toBe(4);
        const list = await (await fetch(`${h.base}/media?bucket_name=${bucket}`)).json();
        expect(list.status).toBe('success');
        expect(list.bucket_name).toBe(bucket);
        const entry = list.videos.find((v: any) => v.video_id === videoId);
        expect(entry).toMatchObject({
          video_name: 'clip.mp4',
          video_path: `${bucket}/${videoId}/clip.mp4`,
          stored: true,
        });
        expect(new Date(entry.creation_ts).toISOString()).toBe(entry.creation_ts);
      });

      it('streams the whole file with Accept-Ranges and Content-Length', async () => {
        const res = await fetch(`${h.base}/media/download?bucket_name=${bucket}&video_id=${videoId}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('accept-ranges')).toBe('bytes');
        expect(res.headers.get('content-type')).toBe('video/mp4');
        expect(res.headers.get('content-length')).toBe(String(videoBytes.length));
        expect(res.headers.get('content-disposition')).toBeNull();
        expect(Buffer.from(await res.arrayBuffer()).equals(videoBytes)).toBe(true);
      });

      it.each([
        ['bytes=0-99', 0, 99],
        ['bytes=100-', 100, -1],
        ['bytes=-50', -50, -1],
        ['bytes=10-999999999', 10, -1],
      ])('answers %s with 206 and the exact bytes', async (range, start, end) => {
        const res = await fetch(`${h.base}/media/download?bucket_name=${bucket}&video_id=${videoId}`, {
          headers: { range },
        });
        expect(res.status).toBe(206);
        const total = videoBytes.length;
        const first = start < 0 ? total + start : start;
        const last = end < 0 ? total - 1 : end;
        expect(res.headers.get('content-range')).toBe(`bytes ${first}-${last}/${total}`);
        expect(res.headers.get('content-length')).toBe(String(last - first + 1));
        expect(Buffer.from(await res.arrayBuffer()).equals(videoBytes.subarray(first, last + 1))).toBe(true);
      });

      it('answers an invalid Range header with the full file and an unsatisfiable one with 416', async () => {
        const invalid = await fetch(`${h.base}/media/download?bucket_name=${bucket}&video_id=${videoId}`, {
          headers: { range: 'bytes=abc' },
        });
        expect(invalid.status).toBe(200);
        expect(Buffer.from(await invalid.arrayBuffer()).length).toBe(videoBytes.length);
        const outside = await fetch(`${h.base}/media/download?bucket_name=${bucket}&video_id=${videoId}`, {
          headers: { range: `bytes=${videoBytes.length + 10}-` },
        });
        expect(outside.status).toBe(416);
        expect(outside.headers.get('content-range')).toBe(`bytes */${videoBytes.length}`);
      });

      it('sends an attachment with download=true and 404s unknown videos', async () => {
        const res = await fetch(`${h.base}/media/download?bucket_name=${bucket}&video_id=${videoId}&download=true`);
        expect(res.headers.get('content-disposition')).toBe('attachment; filename="clip.mp4"');
        await res.arrayBuffer();
        const missing = await fetch(`${h.base}/media/download?bucket_name=${bucket}&video_id=nope`);
        expect(missing.status).toBe(404);
        expect((await missing.json()).status).toBe('error');
        const invalid = await fetch(`${h.base}/media/download?bucket_name=${bucket}&video_id=../x`);
        expect(invalid.status).toBe(400);
      });

      it('re-processes a stored video, replacing its embeddings, and validates the request', async () => {
        const res = await postJson(`${h.base}/media/process`, {
          bucket_name: bucket,
          video_id: videoId,
          frame_interval: 10,
          enable_object_detection: false,
        });
        expect(res.status).toBe(201);
        expect((await res.json()).status).toBe('success');
        expect(await h.vectorStore.count(byVideo(bucket, videoId))).toBe(2);
        const missing = await postJson(`${h.base}/media/process`, { bucket_name: bucket, video_id: 'no-such-video' });
        expect(missing.status).toBe(404);
        for (const bad of [
          { frame_interval: 0 },
          { frame_interval: 61 },
          { detection_confidence: 0.05 },
          { video_id: undefined },
        ]) {
          const r = await postJson(`${h.base}/media/process`, { bucket_name: bucket, video_id: videoId, ...bad });
          expect(r.status).toBe(400);
          expect((await r.json()).status).toBe('error');
        }
      });

      it('stores a clip summary in the text table and validates it', async () => {
        const ok = await postJson(`${h.base}/summary`, {
          bucket_name: bucket,
          video_id: videoId,
          video_summary: 'A test pattern with moving colour bars.',
          video_start_time: 0,
          video_end_time: 1.5,
          tags: ['summary-test'],
        });
        expect(ok.status).toBe(201);
        expect((await ok.json()).status).toBe('success');
        expect(await h.textVectorStore.count(byVideo(bucket, videoId))).toBe(1);
        const cases = [
          { video_end_time: 0 },
          { video_start_time: -1 },
          { video_summary: '   ' },
          { video_id: 'missing-video' },
        ];
        for (const change of cases) {
          const r = await postJson(`${h.base}/summary`, {
            bucket_name: bucket,
            video_id: videoId,
            video_summary: 'text',
            video_start_time: 1,
            video_end_time: 2,
            ...change,
          });
          expect(r.status).toBe(400);
        }
      });

      it('deletes a video: embeddings, summaries and the stored file', async () => {
        const res = await fetch(`${h.base}/media/${bucket}/${videoId}`, { method: 'DELETE' });
        expect(res.status).toBe(200);
        expect((await res.json()).message).toContain(videoId);
        expect(await h.vectorStore.count(byVideo(bucket, videoId))).toBe(0);
        expect(await h.textVectorStore.count(byVideo(bucket, videoId))).toBe(0);
        expect(await h.objectStore.list(bucket, `${videoId}/`)).toEqual([]);
        const again = await fetch(`${h.base}/media/${bucket}/${videoId}`, { method: 'DELETE' });
        expect(again.status).toBe(404);
        expect((await again.json()).message).toContain(bucket);
      });
    });

    describe('upload validation', () => {
      it('stores a PNG named .jpg as .png after checking its bytes', async () => {
        const res = await upload(
          { bytes: pngBytes, filename: 'cat.jpg', contentType: 'image/jpeg' },
          '&enable_object_detection=false',
        );
        expect(res.status).toBe(201);
        const { video_id: id } = await res.json();
        const stored = await h.objectStore.list(bucket, `${id}/`);
        expect(stored.map((o) => o.key)).toEqual([`${id}/cat.png`]);
        const download = await fetch(`${h.base}/media/download?bucket_name=${bucket}&video_id=${id}`);
        expect(download.headers.get('content-type')).toBe('image/png');
        expect(Buffer.from(await download.arrayBuffer()).equals(pngBytes)).toBe(true);
        expect(await h.vectorStore.count(byVideo(bucket, id))).toBe(1);
      });

      it('refuses a text file named .mp4, an unsupported extension and a missing file with 400, storing nothing', async () => {
        const before = (await h.objectStore.list(bucket)).length;
        const text = await upload({
          bytes: Buffer.from('just some text, not a video\n'.repeat(50)),
          filename: 'fake.mp4',
        });
        expect(text.status).toBe(400);
        expect((await text.json()).status).toBe('error');
        const exe = await upload({
          bytes: Buffer.from('MZ'),
          filename: 'tool.exe',
          contentType: 'application/octet-stream',
        });
        expect(exe.status).toBe(400);
        const form = new FormData();
        form.append('other', 'value');
        const none = await fetch(`${h.base}/media/upload?bucket_name=${bucket}`, { method: 'POST', body: form });
        expect(none.status).toBe(400);
        const notMultipart = await postJson(`${h.base}/media/upload?bucket_name=${bucket}`, {});
        expect(notMultipart.status).toBe(400);
        const badQuery = await upload(await formFile(videoFile), '&frame_interval=100');
        expect(badQuery.status).toBe(400);
        expect((await h.objectStore.list(bucket)).length).toBe(before);
      });

      it('answers 413 past the upload cap without storing anything', async () => {
        const before = (await h.objectStore.list(bucket)).length;
        const big = Buffer.concat([videoBytes.subarray(0, 64), Buffer.alloc(TEST_LIMITS.uploadMaxBytes * 3, 1)]);
        const res = await rawMultipartUpload(`${h.base}/media/upload?bucket_name=${bucket}`, {
          bytes: big,
          filename: 'big.mp4',
          contentType: 'video/mp4',
        });
        expect(res.status).toBe(413);
        expect(JSON.parse(res.body).status).toBe('error');
        expect((await h.objectStore.list(bucket)).length).toBe(before);
      });

      it('answers 400 for an MP4 that cannot be decoded and leaves nothing behind', async () => {
        const before = (await h.objectStore.list(bucket)).length;
        const res = await upload(await formFile(await makeCorruptMp4(), 'broken.mp4'));
        expect(res.status).toBe(400);
        expect((await res.json()).message).toMatch(/could not be decoded/);
        expect((await h.objectStore.list(bucket)).length).toBe(before);
        // No marker was written: the same bytes are refused for what they are, not as a duplicate.
        const again = await upload(await formFile(await makeCorruptMp4(), 'broken.mp4'));
        expect(again.status).toBe(400);
      });
    });

    describe('duplicate policy', () => {
      it('answers 409 naming the existing video until that video is deleted', async () => {
        const photo = await formFile(fixtureImage('person_multi_det.jpg'));
        const first = await upload(photo, '&detection_confidence=0.5');
        expect(first.status).toBe(201);
        const { video_id: id } = await first.json();
        // Detection on: the photo of people gives crops besides the whole image.
        expect(await h.vectorStore.count(byVideo(bucket, id))).toBeGreaterThan(1);
        const dup = await upload(photo);
        expect(dup.status).toBe(409);
        expect((await dup.json()).message).toContain(id);
        const ingestDup = await postJson(`${h.base}/media/ingest`, {
          type: 'image_base64',
          image_base64: photo.bytes.toString('base64'),
          bucket_name: 'other-bucket',
        });
        expect(ingestDup.status).toBe(409);

        const permissive = await h.variant({ env: { MM_DATAPREP_ALLOW_DUPLICATE_UPLOADS: 'true' } });
        const allowed = await postForm(
          `${permissive.url}/v1/dataprep/media/upload?bucket_name=${bucket}&enable_object_detection=false`,
          photo,
        );
        expect(allowed.status).toBe(201);
        const { video_id: copyId } = await allowed.json();
        await fetch(`${h.base}/media/${bucket}/${copyId}`, { method: 'DELETE' });

        expect((await fetch(`${h.base}/media/${bucket}/${id}`, { method: 'DELETE' })).status).toBe(200);
        const afterDelete = await upload(photo, '&enable_object_detection=false');
        expect(afterDelete.status).toBe(201);
      });
    });

    describe('ingest', () => {
      const ingest = (body: Record<string, unknown>) =>
        postJson(`${h.base}/media/ingest`, { bucket_name: 'ingest-tests', enable_object_detection: false, ...body });

      it('ingests bare base64 and data URLs, naming the file after the detected format', async () => {
        const coffee = await readFile(fixtureImage('coffee.png'));
        const bare = await ingest({
          type: 'image_base64',
          image_base64: jpgBytes.toString('base64'),
          filename: 'rocket.png',
        });
        expect(bare.status).toBe(201);
        const bareBody = await bare.json();
        expect(bareBody.filename).toBe('rocket.jpg');
        const data = await ingest({
          type: 'image_base64',
          image_base64: `data:image/jpeg;base64,${coffee.toString('base64')}`,
        });
        expect(data.status).toBe(201);
        const { video_id: id, filename } = await data.json();
        expect(filename).toBe('image.png');
        const stored = await h.objectStore.stat('ingest-tests', `${id}/image.png`);
        expect(stored?.size).toBe(coffee.length);
        expect(await h.vectorStore.count(byVideo('ingest-tests', id))).toBe(1);
      });

      it('refuses bad base64, non-images, undecodable images and oversized payloads', async () => {
        expect((await ingest({ type: 'image_base64', image_base64: '***not base64***' })).status).toBe(400);
        expect((await ingest({ type: 'image_base64', image_base64: 'data:text/plain;base64,aGVsbG8=' })).status).toBe(
          400,
        );
        expect(
          (await ingest({ type: 'image_base64', image_base64: Buffer.from('hello world').toString('base64') })).status,
        ).toBe(400);
        const truncatedPng = pngBytes.subarray(0, 2000);
        const truncated = await ingest({ type: 'image_base64', image_base64: truncatedPng.toString('base64') });
        expect(truncated.status).toBe(400);
        const huge = Buffer.alloc(TEST_LIMITS.ingestMaxBytes + 1024, 1);
        expect((await ingest({ type: 'image_base64', image_base64: huge.toString('base64') })).status).toBe(413);
        expect((await ingest({ type: 'image_url' })).status).toBe(400);
        expect((await ingest({ type: 'video_url', image_url: 'http://x' })).status).toBe(400);
        expect(await h.objectStore.list('ingest-tests', '')).toHaveLength(2);
      });

      it('downloads from a URL, following redirects, and stores a PNG served as JPEG as .png', async () => {
        const photo = await ingest({ type: 'image_url', image_url: `${images.url}/redirect` });
        expect(photo.status).toBe(201);
        expect((await photo.json()).filename).toBe('photo.jpg');
        const mislabelled = await ingest({ type: 'image_url', image_url: `${images.url}/mislabelled.jpg` });
        expect(mislabelled.status).toBe(201);
        const { video_id: id, filename } = await mislabelled.json();
        expect(filename).toBe('mislabelled.png');
        const download = await fetch(`${h.base}/media/download?bucket_name=ingest-tests&video_id=${id}`);
        expect(download.headers.get('content-type')).toBe('image/png');
        await download.arrayBuffer();
      });

      it('answers 400 for timeouts, non-images, bad redirects and schemes, 413 for oversized bodies', async () => {
        const slow = await ingest({ type: 'image_url', image_url: `${images.url}/slow.jpg` });
        expect(slow.status).toBe(400);
        expect((await slow.json()).message).toMatch(/timed out/);
        expect((await ingest({ type: 'image_url', image_url: `${images.url}/huge.jpg` })).status).toBe(413);
        expect((await ingest({ type: 'image_url', image_url: `${images.url}/page.html` })).status).toBe(400);
        expect((await ingest({ type: 'image_url', image_url: `${images.url}/missing.jpg` })).status).toBe(400);
        expect((await ingest({ type: 'image_url', image_url: `${images.url}/redirect-ftp` })).status).toBe(400);
        expect((await ingest({ type: 'image_url', image_url: `${images.url}/loop` })).status).toBe(400);
        expect((await ingest({ type: 'image_url', image_url: 'file:///etc/passwd' })).status).toBe(400);
      });
    });

    describe('failures', () => {
      it('answers 502 with the storage message when storage is unreachable', async () => {
        const broken = await h.variant({ objectStore: await backend.broken() });
        const res = await postForm(`${broken.url}/v1/dataprep/media/upload?bucket_name=${bucket}`, {
          bytes: jpgBytes,
          filename: 'rocket.jpg',
        });
        expect(res.status).toBe(502);
        expect(await res.json()).toEqual({ status: 'error', message: STORAGE_UNAVAILABLE_MESSAGE });
        // The local adapter reads a missing root as empty; only a remote backend fails reads too.
        if (!backend.readsFailWhenBroken) return;
        const del = await fetch(`${broken.url}/v1/dataprep/media/${bucket}`, { method: 'DELETE' });
        expect(del.status).toBe(502);
        const list = await fetch(`${broken.url}/v1/dataprep/media?bucket_name=${bucket}`);
        expect(list.status).toBe(500);
        expect(await list.json()).toEqual({ status: 'error', message: INTERNAL_ERROR_MESSAGE });
      });

      it('removes the stored media again when the vector database fails', async () => {
        const before = (await h.objectStore.list(bucket)).length;
        const failing = await h.variant({ vectorStore: failingInserts(h.vectorStore) });
        const res = await postForm(
          `${failing.url}/v1/dataprep/media/upload?bucket_name=${bucket}&enable_object_detection=false`,
          {
            bytes: await readFile(fixtureImage('motorcycle_left.png')),
            filename: 'motorcycle_left.png',
          },
        );
        expect(res.status).toBe(502);
        expect((await h.objectStore.list(bucket)).length).toBe(before);
      });
    });

    describe('telemetry and bucket deletion', () => {
      it('lists telemetry newest first with stage figures and bounds limit', async () => {
        const res = await fetch(`${h.base}/telemetry?limit=2`);
        expect(res.status).toBe(200);
        const body = await res.json();
        expect(body.count).toBe(2);
        const [newest, older] = body.items;
        expect(newest.timestamps.requested_at >= older.timestamps.requested_at).toBe(true);
        expect(newest).toMatchObject({
          source: expect.stringMatching(/^\/v1\/dataprep\/media\/(upload|ingest|process)$/),
          video: { bucket_name: expect.any(String), video_id: expect.any(String), tags: expect.any(Array) },
          config: { object_detection_enabled: expect.any(Boolean), detection_confidence: expect.any(Number) },
          counts: { embeddings_stored: expect.any(Number), frames_extracted: expect.any(Number) },
        });
        expect(newest.stage_duration.wall_s).toBeGreaterThan(0);
        expect(newest.stage_throughput.embeddings_per_s).toBeGreaterThan(0);
        const video = (await (await fetch(`${h.base}/telemetry?limit=20`)).json()).items.find(
          (r: any) => r.source.endsWith('/media/upload') && r.video.filename === 'clip.mp4',
        );
        expect(video.video).toMatchObject({ frame_interval: 5, fps: 10, total_frames: 20, tags: ['a', 'b'] });
        expect(video.counts).toMatchObject({ frames_extracted: 4, embeddings_stored: 4 });
        for (const limit of ['0', '21', 'x']) {
          expect((await fetch(`${h.base}/telemetry?limit=${limit}`)).status).toBe(400);
        }
      });

      it('clears a bucket, answers 200 for an empty one and 400 for invalid or reserved names', async () => {
        const res = await fetch(`${h.base}/media/ingest-tests`, { method: 'DELETE' });
        expect(res.status).toBe(200);
        expect((await res.json()).message).toMatch(/removed 4 stored items/);
        expect(await h.vectorStore.count({ equals: { bucket_name: 'ingest-tests' } })).toBe(0);
        expect(await h.objectStore.list('ingest-tests')).toEqual([]);
        const empty = await fetch(`${h.base}/media/never-used-bucket`, { method: 'DELETE' });
        expect(empty.status).toBe(200);
        expect((await fetch(`${h.base}/media/Bad_Bucket`, { method: 'DELETE' })).status).toBe(400);
        expect((await fetch(`${h.base}/media/${h.config.markerBucket}`, { method: 'DELETE' })).status).toBe(400);
        // The ingest markers went with the bucket: the same photo is accepted again.
        const again = await postJson(`${h.base}/media/ingest`, {
          type: 'image_url',
          image_url: `${images.url}/photo.jpg`,
          bucket_name: 'ingest-tests',
          enable_object_detection: false,
        });
        expect(again.status).toBe(201);
      });
    });
  });
}
