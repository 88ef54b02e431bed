import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { fixtureImage, makeCorruptMp4, runFfmpeg, testMediaDir } from '../../../test/support/media.js';
import { S3ObjectStore, type ObjectStore, type S3ObjectStoreConfig } from '../../lib/storage/index.js';
import { STORAGE_UNAVAILABLE_MESSAGE } from '../errors.js';
import { IngestRoot } from '../ingest-root/ingest-root.js';
import { ReferencedMedia } from '../media/referenced-media.js';
import { startHarness, type Harness } from './harness.js';
import type { StallingProxy } from './stalling-proxy.js';

/** A storage backend the frame suite runs against; `proxy` when its media is read over HTTP through one. */
export interface FrameBackendFixture {
  name: string;
  open(): Promise<ObjectStore>;
  /** The proxy in front of the S3 server (remote backends): holds and counts the media reads of ffmpeg. */
  proxy?: () => StallingProxy;
  /** The S3 settings of the store (remote backends), to build one that cannot reach its server. */
  s3Config?: () => S3ObjectStoreConfig;
  stop(): Promise<void>;
}

const FPS = 10;
/** Red channel of frame n (blue is its complement): the frame's number is readable from its colour. */
const redOf = (n: number) => n * 12;

/**
 * An H.264 MP4 (yuv420p, faststart) of `frames` frames at 10 fps whose frame n is one flat colour (red = 12 n), so
 * a JPEG of any moment says which frame it shows. `reverse` counts down instead (a different file, same length).
 */
async function colourVideo(frames: number, width: number, height: number, reverse = false): Promise<string> {
  const file = path.join(await testMediaDir(), `colour-${frames}-${width}x${height}${reverse ? '-rev' : ''}.mp4`);
  const n = reverse ? `(${frames - 1}-N)` : 'N';
  await runFfmpeg([
    ...['-f', 'lavfi', '-i', `color=c=black:s=${width}x${height}:r=${FPS}`],
    ...['-vf', `format=rgb24,geq=r='${n}*12':g='128':b='255-${n}*12',format=yuv420p`],
    ...['-frames:v', String(frames), '-c:v', 'libx264', '-preset', 'veryfast', '-g', '5'],
    ...['-movflags', '+faststart', file],
  ]);
  return file;
}

/**
 * A large MP4 (about 40 MB: 5 s of lossless noise at 640×360, a keyframe a second), so that what sockets buffer on
 * loopback is small beside what a whole-file read would move.
 */
async function largeVideo(): Promise<string> {
  const file = path.join(await testMediaDir(), 'noise-5s-lossless.mp4');
  await runFfmpeg([
    ...['-f', 'lavfi', '-i', `testsrc=size=640x360:rate=25`, '-vf', 'noise=alls=60:allf=t,format=yuv420p'],
    ...['-frames:v', '125', '-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '0', '-g', '25'],
    ...['-movflags', '+faststart', file],
  ]);
  return file;
}

/** Mean red and blue of a JPEG, its size. */
async function look(jpeg: Buffer) {
  const stats = await sharp(jpeg).stats();
  const meta = await sharp(jpeg).metadata();
  return { red: stats.channels[0].mean, blue: stats.channels[2].mean, width: meta.width, height: meta.height };
}

/** The ffmpeg/ffprobe processes whose parent is this process (from /proc): what a leak would leave. */
async function ffmpegChildren(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const fields = /^\d+ \((.*)\) \S (\d+)/.exec(stat);
    if (fields && Number(fields[2]) === process.pid && /^ff(mpeg|probe)/.test(fields[1])) found.push(Number(entry));
  }
  return found;
}

/** Sum of a counter's values whose labels match. */
async function counted(counter: { get(): Promise<{ values: Array<{ value: number; labels: object }> }> }, labels = {}) {
  const { values } = await counter.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x))
    .reduce((sum, v) => sum + v.value, 0);
}

/** A GET whose request can be destroyed by the caller (the client leaving). */
function abortableGet(url: string) {
  const request = http.get(url, { agent: false });
  request.on('error', () => undefined);
  return request;
}

/** The frame route suite: real ffmpeg and sharp over a real object store, through the real HTTP endpoint. */
export function describeFrameRoutes(backend: FrameBackendFixture): void {
  describe(`GET /media/frame on ${backend.name} storage`, () => {
    let h: Harness;
    let store: ObjectStore;
    const bucket = 'frame-tests';
    const ids: Record<string, string> = {};
    let sizes: Record<string, number>;

    const frameUrl = (query: Record<string, string | number>, base = h.base) =>
      `${base}/media/frame?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`;
    const getFrame = (query: Record<string, string | number>, init?: RequestInit) =>
      fetch(frameUrl({ bucket_name: bucket, ...query }), init);
    const spawns = () => counted(h.services.frames.spawned);

    async function putMedia(name: string, file: string, filename: string): Promise<void> {
      ids[name] = randomUUID();
      await store.put(bucket, `${ids[name]}/${filename}`, await readFile(file));
    }

    beforeAll(async () => {
      store = await backend.open();
      h = await startHarness(store);
      const colour = await colourVideo(20, 160, 120);
      await putMedia('colour', colour, 'colour.mp4');
      await putMedia('photo', fixtureImage('chelsea.png'), 'chelsea.png');
      await putMedia('corrupt', await makeCorruptMp4(), 'broken.mp4');
      if (backend.proxy) {
        await putMedia('large', await largeVideo(), 'large.mp4');
        sizes = { large: (await readFile(await largeVideo())).length };
      }
    });

    afterAll(async () => {
      await h?.close();
      await store?.close();
      await backend.stop();
    });

    it('answers the frame on screen at t: different moments differ and each is the frame ffmpeg decodes there', async () => {
      // Frame n starts at n/10 s; t inside a frame's span shows that frame, t up to the duration (2 s) the last one.
      for (const [t, frame] of [
        [0, 0],
        [0.55, 5],
        [1.2, 12],
        [1.99, 19],
        [2, 19],
      ]) {
        const res = await getFrame({ video_id: ids.colour, t });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('image/jpeg');
        const seen = await look(Buffer.from(await res.arrayBuffer()));
        expect({ t, width: seen.width, height: seen.height }).toEqual({ t, width: 160, height: 120 });
        expect(Math.abs(seen.red - redOf(frame))).toBeLessThan(4);
        expect(Math.abs(seen.blue - (255 - redOf(frame)))).toBeLessThan(4);
      }
    });

    it('scales to width (height keeps the aspect ratio) and refuses widths outside 16–1920 naming width', async () => {
      const res = await getFrame({ video_id: ids.colour, t: 1, width: 64 });
      expect(res.status).toBe(200);
      const seen = await look(Buffer.from(await res.arrayBuffer()));
      expect([seen.width, seen.height]).toEqual([64, 48]);
      expect(Math.abs(seen.red - redOf(10))).toBeLessThan(4);
      for (const width of [15, 1921, 1.5, 'wide']) {
        const bad = await getFrame({ video_id: ids.colour, t: 1, width });
        expect(bad.status).toBe(400);
        const body = (await bad.json()) as { status: string; message: string };
        expect(body.status).toBe('error');
        expect(body.message).toContain('width');
      }
    });

    it('400 names t when it is missing, negative or not a number, and says when it is past the end', async () => {
      for (const t of [undefined, -1, 'soon']) {
        const res = await getFrame(t === undefined ? { video_id: ids.colour } : { video_id: ids.colour, t });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { message: string }).message).toContain('t');
      }
      const past = await getFrame({ video_id: ids.colour, t: 2.5 });
      expect(past.status).toBe(400);
      expect(await past.json()).toEqual({ status: 'error', message: 't=2.5 is past the end of the video (2 s)' });
    });

    it('404 for an unknown video or bucket, 400 for an invalid video_id, bucket name or the marker bucket', async () => {
      const unknownVideo = await getFrame({ video_id: randomUUID(), t: 0 });
      expect(unknownVideo.status).toBe(404);
      expect(((await unknownVideo.json()) as { message: string }).message).toMatch(/not found in bucket frame-tests/);
      expect((await fetch(frameUrl({ bucket_name: 'no-such-bucket', video_id: ids.colour, t: 0 }))).status).toBe(404);
      expect((await getFrame({ video_id: '../etc', t: 0 })).status).toBe(400);
      expect((await fetch(frameUrl({ bucket_name: 'Bad_Name', video_id: ids.colour, t: 0 }))).status).toBe(400);
      const marker = await fetch(frameUrl({ bucket_name: h.config.markerBucket, video_id: ids.colour, t: 0 }));
      expect(marker.status).toBe(400);
    });

    it('an image answers itself as a JPEG, resized, whatever t', async () => {
      const own = await getFrame({ video_id: ids.photo, t: 0 });
      expect(own.status).toBe(200);
      const original = await sharp(fixtureImage('chelsea.png')).metadata();
      const seen = await look(Buffer.from(await own.arrayBuffer()));
      expect([seen.width, seen.height]).toEqual([original.width, original.height]);
      const small = await getFrame({ video_id: ids.photo, t: 42, width: 100 });
      const resized = await look(Buffer.from(await small.arrayBuffer()));
      expect(resized.width).toBe(100);
      expect(resized.height).toBe(Math.round((100 * original.height!) / original.width!));
    });

    it('is documented in the OpenAPI document with its parameters and answers', async () => {
      const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
        paths: Record<string, { get: { parameters: Array<{ name: string }>; responses: Record<string, unknown> } }>;
      };
      const get = doc.paths['/v1/dataprep/media/frame'].get;
      expect(get.parameters.map((p) => p.name)).toEqual(
        expect.arrayContaining(['video_id', 'bucket_name', 't', 'width']),
      );
      expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['200', '304', '400', '404', '502', '504']));
    });

    it('undecodable media is 400 without paths or URLs in the message', async () => {
      const res = await getFrame({ video_id: ids.corrupt, t: 0 });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ status: 'error', message: 'The media could not be decoded' });
    });

    it('a cached frame spawns no process; its ETag answers 304; concurrent identical requests share one ffmpeg', async () => {
      const first = await getFrame({ video_id: ids.colour, t: 0.7, width: 32 });
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag');
      expect(etag).toMatch(/^"[\w-]+"$/);
      expect(first.headers.get('cache-control')).toBe('max-age=300');
      const before = await spawns();
      const hitsBefore = await counted(h.services.frames.requests, { cache: 'hit' });
      const again = await getFrame({ video_id: ids.colour, t: 0.75, width: 32 }); // same frame (7)
      expect(Buffer.from(await again.arrayBuffer())).toEqual(Buffer.from(await first.arrayBuffer()));
      const revalidated = await getFrame(
        { video_id: ids.colour, t: 0.7, width: 32 },
        // fetch would add `Cache-Control: no-cache` (a reload, which must not be answered 304) unless one is given.
        { headers: { 'if-none-match': etag!, 'cache-control': 'max-age=0' } },
      );
      expect(revalidated.status).toBe(304);
      expect(await spawns()).toBe(before);
      expect(await counted(h.services.frames.requests, { cache: 'hit' })).toBe(hitsBefore + 2);

      const renders = await counted(h.services.frames.requests);
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => getFrame({ video_id: ids.colour, t: 1.5, width: 48 })),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      // One ffmpeg for four requests (the probe is cached already): one miss, the others joined it or hit its result.
      expect(await spawns()).toBe(before + 1);
      expect(await counted(h.services.frames.requests, { cache: 'miss' })).toBeGreaterThan(0);
      expect((await counted(h.services.frames.requests)) - renders).toBe(4);
    });

    it('a re-stored file under the same key is rendered anew, never served stale from the cache', async () => {
      const id = randomUUID();
      await store.put(bucket, `${id}/clip.mp4`, await readFile(await colourVideo(20, 160, 120)));
      const before = await look(Buffer.from(await (await getFrame({ video_id: id, t: 0 })).arrayBuffer()));
      expect(Math.abs(before.red - redOf(0))).toBeLessThan(4);
      await store.put(bucket, `${id}/clip.mp4`, await readFile(await colourVideo(20, 160, 120, true)));
      const after = await look(Buffer.from(await (await getFrame({ video_id: id, t: 0 })).arrayBuffer()));
      expect(Math.abs(after.red - redOf(19))).toBeLessThan(4);
    });

    it('serves media referenced in place below the ingest root', async () => {
      const root = await mkdtemp(path.join(os.tmpdir(), 'frame-root-'));
      try {
        await mkdir(path.join(root, 'cams'));
        await writeFile(path.join(root, 'cams', 'ref.mp4'), await readFile(await colourVideo(20, 160, 120)));
        const id = randomUUID();
        await new ReferencedMedia(store, h.config.markerBucket, new IngestRoot(root)).record({
          bucket_name: bucket,
          video_id: id,
          filename: 'ref.mp4',
          path: 'cams/ref.mp4',
          sha256: 'x'.repeat(64),
          created_at: new Date().toISOString(),
        });
        const server = await h.variant({ env: { MM_DATAPREP_INGEST_DATA_ROOT: root } });
        const res = await fetch(frameUrl({ bucket_name: bucket, video_id: id, t: 0.9 }, `${server.url}/v1/dataprep`));
        expect(res.status).toBe(200);
        expect(Math.abs((await look(Buffer.from(await res.arrayBuffer()))).red - redOf(9))).toBeLessThan(4);
        // Without the root configured the reference cannot be checked: 404, as for downloads.
        expect((await getFrame({ video_id: id, t: 0 })).status).toBe(404);
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    });

    if (backend.proxy) {
      const proxy = () => backend.proxy!();
      // The object's own path (GETs of ffmpeg and ffprobe), not the listings that carry the id as a prefix.
      const largeObject = () => `/${bucket}/${ids.large}/large.mp4`;

      it('reads an S3 object with Range requests: a late frame costs a fraction of the file', async () => {
        const before = proxy().bytesServed(largeObject());
        const requestsBefore = proxy().rangeStarts(largeObject()).length;
        const res = await getFrame({ video_id: ids.large, t: 4.5 });
        expect(res.status).toBe(200);
        const read = proxy().bytesServed(largeObject()) - before;
        expect(read).toBeGreaterThan(0);
        // The keyframe before 4.5 s lies at about 80% of the file: ffmpeg asked for it with a Range, not read up to it.
        const starts = proxy().rangeStarts(largeObject()).slice(requestsBefore);
        expect(Math.max(...starts)).toBeGreaterThan(sizes.large * 0.7);
        // What moved includes what loopback sockets buffer ahead of ffmpeg (a few MB), never the whole file.
        expect(read / sizes.large).toBeLessThan(0.5);
      });

      it('a client that leaves while ffmpeg reads kills it: no ffmpeg process is left', async () => {
        proxy().stallPathsContaining = largeObject();
        try {
          const stalled = proxy().nextStall();
          const request = abortableGet(frameUrl({ bucket_name: bucket, video_id: ids.large, t: 3.3 }));
          const held = await stalled; // ffmpeg (or ffprobe) has the media open and waits for bytes
          expect(await ffmpegChildren()).not.toEqual([]);
          request.destroy();
          await held.closed;
          await h.services.frames.processes.idle();
          expect(await ffmpegChildren()).toEqual([]);
        } finally {
          proxy().stallPathsContaining = undefined;
        }
      });

      it("502 when the S3 server cannot be reached or fails ffmpeg's reads", async () => {
        const unreachable = new S3ObjectStore({ ...backend.s3Config!(), endpoint: 'http://127.0.0.1:9' });
        const down = await h.variant({ objectStore: unreachable });
        const lookup = await fetch(
          frameUrl({ bucket_name: bucket, video_id: ids.large, t: 1 }, `${down.url}/v1/dataprep`),
        );
        expect(lookup.status).toBe(502);
        expect(await lookup.json()).toEqual({ status: 'error', message: STORAGE_UNAVAILABLE_MESSAGE });
        await unreachable.close();
        // The listing works, the object's GETs answer 503 (a fresh app: nothing of this video is cached or probed).
        const fresh = await h.variant({});
        proxy().failPathsContaining = largeObject();
        try {
          const res = await fetch(
            frameUrl({ bucket_name: bucket, video_id: ids.large, t: 2 }, `${fresh.url}/v1/dataprep`),
          );
          expect(res.status).toBe(502);
          expect(await res.json()).toEqual({ status: 'error', message: STORAGE_UNAVAILABLE_MESSAGE });
        } finally {
          proxy().failPathsContaining = undefined;
        }
      });

      it('a render past the time limit is killed and answered 504', async () => {
        const server = await h.variant({ env: { MM_DATAPREP_FRAME_TIMEOUT_SECONDS: '0.5' } });
        proxy().stallPathsContaining = largeObject();
        try {
          const res = await fetch(
            frameUrl({ bucket_name: bucket, video_id: ids.large, t: 4.4 }, `${server.url}/v1/dataprep`),
          );
          expect(res.status).toBe(504);
          expect(await res.json()).toEqual({ status: 'error', message: 'Frame extraction timed out after 0.5 s' });
          // The answer is sent only after the killed process exited.
          expect(await ffmpegChildren()).toEqual([]);
        } finally {
          proxy().stallPathsContaining = undefined;
        }
      });
    }
  });
}
