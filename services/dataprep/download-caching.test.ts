import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeTestVideo } from '../../test/support/media.js';
import type { RunningServer } from '../lib/http/index.js';
import { bundledFfmpegPaths } from '../lib/media/ffmpeg-paths.js';
import { LocalObjectStore, S3ObjectStore, type ObjectStore } from '../lib/storage/index.js';
import { startS3rver, type S3rverHandle } from '../lib/storage/testing/s3rver-server.js';
import { IngestRoot } from './ingest-root/ingest-root.js';
import { ReferencedMedia } from './media/referenced-media.js';
import { startHarness, type Harness } from './testing/harness.js';
import { formFile, postForm } from './testing/http-client.js';

const run = promisify(execFile);

// The conditional-request checks speak through the real curl; without it they cannot run, and say so in their name.
const curlFound = spawnSync('curl', ['--version']).status === 0;
const describeWithCurl = curlFound ? describe : describe.skip;
const curlNote = curlFound ? '' : ' (SKIPPED: curl is not installed)';

/** One answer as curl received it: the status line's code, the headers (lower-case names) and the body bytes. */
interface CurlAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

function parseHeaders(dump: string): Omit<CurlAnswer, 'body'> {
  // The last block is the final answer (a 100 Continue or redirect would come before it).
  const block = dump
    .trim()
    .split(/\r\n\r\n/)
    .pop()!;
  const [statusLine, ...lines] = block.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers };
}

let scratch: string;

/** GET with curl; `resume` is the part of the file already held (curl -C - asks for the rest with a Range). */
async function curl(url: string, args: string[] = [], resume?: Buffer): Promise<CurlAnswer> {
  const out = path.join(scratch, `${randomUUID()}.body`);
  if (resume) await writeFile(out, resume);
  const { stdout } = await run('curl', ['-sS', '--max-time', '60', '-D', '-', '-o', out, ...args, url], {
    maxBuffer: 1024 * 1024,
  });
  const body = await readFile(out).catch(() => Buffer.alloc(0));
  await rm(out, { force: true });
  return { ...parseHeaders(stdout), body };
}

/** HEAD with curl (-I): the headers only. */
async function curlHead(url: string, args: string[] = []): Promise<Omit<CurlAnswer, 'body'>> {
  const { stdout } = await run('curl', ['-sS', '--max-time', '60', '-I', ...args, url]);
  return parseHeaders(stdout);
}

/** One exchange a recording proxy relayed. */
interface Exchange {
  method: string;
  range?: string;
  status: number;
  etag?: string;
}

/** A forwarding proxy in front of the service that records each request's Range and the answer's status and ETag. */
async function startRecordingProxy(
  target: string,
): Promise<{ url: string; exchanges: Exchange[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const exchanges: Exchange[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        exchanges.push({
          method: req.method!,
          range: req.headers.range,
          status: answer.statusCode!,
          etag: answer.headers.etag,
        });
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    forward.once('error', () => res.destroy());
    res.once('close', () => forward.destroy());
    req.pipe(forward);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

interface Backend {
  name: string;
  open(): Promise<ObjectStore>;
  stop(): Promise<void>;
}

/**
 * HTTP caching of GET /media/download (RFC 9110 §13 and §14) on one storage backend, spoken by real clients: curl for
 * validators, conditional GETs, If-Range and HEAD; ffmpeg seeking over HTTP.
 */
function describeDownloadCaching(backend: Backend): void {
  describeWithCurl(`GET /media/download caching on ${backend.name} storage${curlNote}`, () => {
    const bucket = 'cache-tests';
    let h: Harness;
    let video: Buffer;
    let videoId: string;
    let url: string;
    let lastModified: string;
    const strongTag = () => `"${sha256(video)}"`;

    beforeAll(async () => {
      scratch = await mkdtemp(path.join(os.tmpdir(), 'download-caching-'));
      h = await startHarness(await backend.open());
      // Keyframes every 2 s over 6 s: a seek to 4.5 s lands well inside the file, so ffmpeg has to ask for a range.
      const file = await makeTestVideo({ seconds: 6, fps: 10, width: 320, height: 240, bitrate: '600k', noise: true });
      video = await readFile(file);
      const form = await formFile(file, 'clip.mp4', 'video/mp4');
      const res = await postForm(
        `${h.base}/media/upload?bucket_name=${bucket}&frame_interval=30&enable_object_detection=false`,
        form,
      );
      expect(res.status).toBe(201);
      videoId = ((await res.json()) as { video_id: string }).video_id;
      url = `${h.base}/media/download?bucket_name=${bucket}&video_id=${videoId}`;
      lastModified = (await h.services.catalogue.find(bucket, videoId))!.lastModified.toUTCString();
    });

    afterAll(async () => {
      await h?.close();
      await backend.stop();
      await rm(scratch, { recursive: true, force: true });
    });

    describe('stored media', () => {
      it('answers with the content hash as a strong ETag, Last-Modified and Cache-Control', async () => {
        const res = await curl(url);
        expect(res.status).toBe(200);
        expect(res.headers.etag).toBe(strongTag());
        expect(res.headers['last-modified']).toBe(lastModified);
        expect(res.headers['cache-control']).toBe('private, max-age=3600');
        expect(res.headers['accept-ranges']).toBe('bytes');
        expect(res.body.equals(video)).toBe(true);
      });

      it('revalidates with curl --etag-compare: 304, no body, the validators and Cache-Control repeated', async () => {
        const tags = path.join(scratch, 'etag.txt');
        expect((await curl(url, ['--etag-save', tags])).status).toBe(200);
        const res = await curl(url, ['--etag-compare', tags]);
        expect(res.status).toBe(304);
        expect(res.body.length).toBe(0);
        expect(res.headers.etag).toBe(strongTag());
        expect(res.headers['last-modified']).toBe(lastModified);
        expect(res.headers['cache-control']).toBe('private, max-age=3600');
        expect(res.headers['content-length']).toBeUndefined();
      });

      it('If-None-Match compares weakly: its tag, W/ of it, a list holding it and * answer 304; others 200', async () => {
        const answers: Array<[string, number]> = [
          [strongTag(), 304],
          [`W/${strongTag()}`, 304],
          [`"0000", ${strongTag()} , W/"1111"`, 304],
          ['*', 304],
          [`"${'0'.repeat(64)}"`, 200],
          ['"a", W/"b"', 200],
        ];
        for (const [header, status] of answers) {
          const res = await curl(url, ['-H', `If-None-Match: ${header}`]);
          expect({ header, status: res.status, bytes: res.body.length }).toEqual({
            header,
            status,
            bytes: status === 304 ? 0 : video.length,
          });
        }
      });

      it('evaluates the conditions of a request with Cache-Control: no-cache too (that reload rule is for caches)', async () => {
        const res = await curl(url, ['-H', 'Cache-Control: no-cache', '-H', `If-None-Match: ${strongTag()}`]);
        expect(res.status).toBe(304);
      });

      it('If-Modified-Since (curl -z): 304 at or after Last-Modified, 200 before it or when malformed', async () => {
        expect((await curl(url, ['-z', lastModified])).status).toBe(304);
        const later = new Date(Date.parse(lastModified) + 86_400_000).toUTCString();
        expect((await curl(url, ['-z', later])).status).toBe(304);
        const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
        const modified = await curl(url, ['-z', earlier]);
        expect(modified.status).toBe(200);
        expect(modified.body.equals(video)).toBe(true);
        expect((await curl(url, ['-H', 'If-Modified-Since: yesterday, probably'])).status).toBe(200);
        expect((await curl(url, ['-H', `If-Modified-Since: ${lastModified}, ${lastModified}`])).status).toBe(200);
      });

      it('If-None-Match takes precedence over If-Modified-Since', async () => {
        const earlier = new Date(Date.parse(lastModified) - 86_400_000).toUTCString();
        const matching = await curl(url, [
          '-H',
          `If-None-Match: ${strongTag()}`,
          '-H',
          `If-Modified-Since: ${earlier}`,
        ]);
        expect(matching.status).toBe(304);
        const other = await curl(url, ['-H', 'If-None-Match: "other"', '-H', `If-Modified-Since: ${lastModified}`]);
        expect(other.status).toBe(200);
        expect(other.body.equals(video)).toBe(true);
      });

      it('resumes a download (curl -C -) with If-Range naming the strong ETag: 206 and the rest of the file', async () => {
        const held = video.subarray(0, 1000);
        const res = await curl(url, ['-C', '-', '-H', `If-Range: ${strongTag()}`], held);
        expect(res.status).toBe(206);
        expect(res.headers['content-range']).toBe(`bytes 1000-${video.length - 1}/${video.length}`);
        expect(res.headers.etag).toBe(strongTag());
        expect(res.body.equals(video)).toBe(true);
      });

      it.each([
        ['another tag', () => '"0000"'],
        ['its tag marked weak (strong comparison fails)', (tag: string) => `W/${tag}`],
        [
          'a date other than Last-Modified',
          (_tag: string, date: string) => new Date(Date.parse(date) + 1000).toUTCString(),
        ],
        ['a malformed date', () => 'not a date'],
      ])('If-Range with %s sends the whole file (200), not the range', async (_name, header) => {
        const res = await curl(url, ['-r', '0-99', '-H', `If-Range: ${header(strongTag(), lastModified)}`]);
        expect(res.status).toBe(200);
        expect(res.headers['content-range']).toBeUndefined();
        expect(res.headers['content-length']).toBe(String(video.length));
        expect(res.body.equals(video)).toBe(true);
      });

      it('If-Range with exactly the Last-Modified date keeps the range (206)', async () => {
        const res = await curl(url, ['-r', '0-99', '-H', `If-Range: ${lastModified}`]);
        expect(res.status).toBe(206);
        expect(res.headers['last-modified']).toBe(lastModified);
        expect(res.body.equals(video.subarray(0, 100))).toBe(true);
      });

      it('ignores If-Range without a Range; a failed If-Range ignores an unsatisfiable Range, a matching one keeps 416', async () => {
        const alone = await curl(url, ['-H', 'If-Range: "0000"']);
        expect(alone.status).toBe(200);
        expect(alone.body.equals(video)).toBe(true);
        const past = `${video.length + 10}-`;
        const stale = await curl(url, ['-r', past, '-H', 'If-Range: "0000"']);
        expect(stale.status).toBe(200);
        expect(stale.body.equals(video)).toBe(true);
        const current = await curl(url, ['-r', past, '-H', `If-Range: ${strongTag()}`]);
        expect(current.status).toBe(416);
        expect(current.headers['content-range']).toBe(`bytes */${video.length}`);
      });

      it('answers a fresh conditional GET 304 even when it carries a Range', async () => {
        const res = await curl(url, ['-r', '0-99', '-H', `If-None-Match: ${strongTag()}`]);
        expect(res.status).toBe(304);
        expect(res.body.length).toBe(0);
      });

      it('answers HEAD with the headers of a GET (Range ignored) and 304 when fresh', async () => {
        const head = await curlHead(url, ['-r', '0-99']);
        expect(head.status).toBe(200);
        expect(head.headers['content-length']).toBe(String(video.length));
        expect(head.headers.etag).toBe(strongTag());
        expect(head.headers['last-modified']).toBe(lastModified);
        expect(head.headers['cache-control']).toBe('private, max-age=3600');
        expect(head.headers['content-range']).toBeUndefined();
        const fresh = await curlHead(url, ['-H', `If-None-Match: ${strongTag()}`]);
        expect(fresh.status).toBe(304);
        expect(fresh.headers.etag).toBe(strongTag());
      });

      it('ffmpeg seeks over HTTP (-ss): it decodes a frame from Range answers that all carry the strong ETag', async () => {
        const proxy = await startRecordingProxy(h.url);
        try {
          const frame = path.join(scratch, 'frame.jpg');
          const address = `${proxy.url}/v1/dataprep/media/download?bucket_name=${bucket}&video_id=${videoId}`;
          await run(bundledFfmpegPaths().ffmpeg, [
            ...['-nostdin', '-hide_banner', '-loglevel', 'error', '-y'],
            ...['-ss', '4.5', '-i', address, '-frames:v', '1', '-f', 'image2', frame],
          ]);
          const jpeg = await readFile(frame);
          expect(jpeg.subarray(0, 2).equals(Buffer.from([0xff, 0xd8]))).toBe(true);
          const ranged = proxy.exchanges.filter((e) => e.range !== undefined);
          // The seek: a range starting inside the file, answered 206.
          expect(ranged.some((e) => Number(/^bytes=(\d+)-/.exec(e.range!)?.[1]) > 0 && e.status === 206)).toBe(true);
          expect(proxy.exchanges.map((e) => e.etag)).toEqual(proxy.exchanges.map(() => strongTag()));
        } finally {
          await proxy.close();
        }
      });

      it('media stored without a content hash (never processed) gets a weak ETag of its identity and no-cache', async () => {
        const id = randomUUID();
        await h.objectStore.put(bucket, `${id}/raw.mp4`, video, { contentType: 'video/mp4' });
        const raw = `${h.base}/media/download?bucket_name=${bucket}&video_id=${id}`;
        const res = await curl(raw);
        expect(res.status).toBe(200);
        expect(res.headers.etag).toMatch(/^W\/"[^"]+"$/);
        expect(res.headers.etag).not.toContain(sha256(video));
        expect(res.headers['cache-control']).toBe('private, no-cache');
        expect((await curl(raw, ['-H', `If-None-Match: ${res.headers.etag}`])).status).toBe(304);
        // A weak tag never satisfies If-Range, and the date of a weakly validated item is not strong either.
        expect((await curl(raw, ['-r', '0-99', '-H', `If-Range: ${res.headers.etag}`])).status).toBe(200);
        expect((await curl(raw, ['-r', '0-99', '-H', `If-Range: ${res.headers['last-modified']}`])).status).toBe(200);
      });

      if (backend.name === 'local') {
        it('a modification time in the future is sent as the time of the answer and resumes nothing by date', async () => {
          const form = await formFile(await makeTestVideo({ seconds: 1, fps: 5, width: 160, height: 120 }), 'f.mp4');
          const res = await postForm(
            `${h.base}/media/upload?bucket_name=${bucket}&enable_object_detection=false`,
            form,
          );
          const id = ((await res.json()) as { video_id: string }).video_id;
          const future = new Date(Date.now() + 86_400_000);
          // The object and its hash link both from the future (a store whose clock runs ahead): the hash still holds.
          const object = (await h.objectStore.localPath(bucket, `${id}/f.mp4`))!;
          const link = (await h.objectStore.localPath(h.config.markerBucket, `videos/${bucket}/${id}.json`))!;
          for (const file of [object, link]) await utimes(file, future, future);
          const address = `${h.base}/media/download?bucket_name=${bucket}&video_id=${id}`;
          const first = await curl(address);
          expect(first.headers.etag).toBe(`"${sha256(form.bytes)}"`);
          expect(Date.parse(first.headers['last-modified'])).toBeLessThanOrEqual(Date.parse(first.headers.date));
          const ranged = await curl(address, ['-r', '0-99', '-H', `If-Range: ${first.headers['last-modified']}`]);
          expect(ranged.status).toBe(200);
          expect(ranged.body.equals(form.bytes)).toBe(true);
        });

        // Only the local store lets a test date an object deterministically (S3 stamps it with its own clock).
        it('an object replaced after its hash was recorded is no longer named by that hash', async () => {
          const form = await formFile(await makeTestVideo({ seconds: 1, fps: 10, width: 160, height: 120 }), 'a.mp4');
          const res = await postForm(
            `${h.base}/media/upload?bucket_name=${bucket}&enable_object_detection=false`,
            form,
          );
          const id = ((await res.json()) as { video_id: string }).video_id;
          const replaced = `${h.base}/media/download?bucket_name=${bucket}&video_id=${id}`;
          expect((await curl(replaced)).headers.etag).toBe(`"${sha256(form.bytes)}"`);
          const file = (await h.objectStore.localPath(bucket, `${id}/a.mp4`))!;
          await writeFile(file, video);
          const later = new Date(Date.now() + 3_600_000);
          await utimes(file, later, later);
          const after = await curl(replaced);
          expect(after.body.equals(video)).toBe(true);
          expect(after.headers.etag).toMatch(/^W\//);
          expect(after.headers.etag).not.toContain(sha256(form.bytes));
          expect((await curl(replaced, ['-H', `If-None-Match: "${sha256(form.bytes)}"`])).status).toBe(200);
        });
      }
    });

    describe('media referenced in place', () => {
      let root: string;
      let server: RunningServer;
      let file: string;
      let refUrl: string;
      const modified = new Date('2026-03-01T12:00:00Z');

      beforeAll(async () => {
        root = await mkdtemp(path.join(os.tmpdir(), 'download-caching-root-'));
        await mkdir(path.join(root, 'cams'));
        file = path.join(root, 'cams', 'ref.mp4');
        await writeFile(file, video);
        await utimes(file, modified, modified);
        const id = randomUUID();
        await new ReferencedMedia(h.objectStore, h.config.markerBucket, new IngestRoot(root)).record({
          bucket_name: bucket,
          video_id: id,
          filename: 'ref.mp4',
          path: 'cams/ref.mp4',
          sha256: sha256(video),
          created_at: new Date().toISOString(),
        });
        server = await h.variant({ env: { MM_DATAPREP_INGEST_DATA_ROOT: root } });
        refUrl = `${server.url}/v1/dataprep/media/download?bucket_name=${bucket}&video_id=${id}`;
      });

      afterAll(async () => {
        await server?.close();
        await rm(root, { recursive: true, force: true });
      });

      it("answers with a weak ETag of the file's identity, its mtime as Last-Modified and no-cache", async () => {
        const res = await curl(refUrl);
        expect(res.status).toBe(200);
        expect(res.headers.etag).toMatch(/^W\/"[^"]+"$/);
        expect(res.headers['last-modified']).toBe(modified.toUTCString());
        expect(res.headers['cache-control']).toBe('private, no-cache');
        expect(res.body.equals(video)).toBe(true);
        expect((await curl(refUrl, ['-z', modified.toUTCString()])).status).toBe(304);
      });

      it('sends a file mtime in the future as the time of the answer', async () => {
        const future = new Date(Date.now() + 10 * 365 * 86_400_000);
        await utimes(file, future, future);
        try {
          const res = await curl(refUrl);
          expect(res.status).toBe(200);
          expect(Date.parse(res.headers['last-modified'])).toBeLessThanOrEqual(Date.parse(res.headers.date));
        } finally {
          await utimes(file, modified, modified);
        }
      });

      it('never resumes from If-Range: its validators are weak, so the whole file is sent', async () => {
        const { headers } = await curl(refUrl);
        for (const validator of [headers.etag, headers['last-modified']]) {
          const res = await curl(refUrl, ['-r', '0-99', '-H', `If-Range: ${validator}`]);
          expect(res.status).toBe(200);
          expect(res.body.equals(video)).toBe(true);
        }
        expect((await curl(refUrl, ['-r', '0-99'])).status).toBe(206);
      });

      it('revalidates to 304 while the file is unchanged and to 200 with a new ETag once it changed', async () => {
        const tags = path.join(scratch, 'ref-etag.txt');
        const first = await curl(refUrl, ['--etag-save', tags]);
        const unchanged = await curl(refUrl, ['--etag-compare', tags]);
        expect(unchanged.status).toBe(304);
        expect(unchanged.headers.etag).toBe(first.headers.etag);
        expect(unchanged.headers['cache-control']).toBe('private, no-cache');
        // Rewritten in place with other bytes and its mtime set back: Last-Modified alone could not tell.
        const other = video.subarray(0, video.length - 1000);
        await writeFile(file, other);
        await utimes(file, modified, modified);
        const changed = await curl(refUrl, ['--etag-compare', tags]);
        expect(changed.status).toBe(200);
        expect(changed.headers.etag).not.toBe(first.headers.etag);
        expect(changed.body.equals(other)).toBe(true);
      });
    });
  });
}

let localRoot: string | undefined;
describeDownloadCaching({
  name: 'local',
  async open() {
    localRoot = await mkdtemp(path.join(os.tmpdir(), 'download-caching-media-'));
    return new LocalObjectStore(path.join(localRoot, 'media'));
  },
  async stop() {
    if (localRoot) await rm(localRoot, { recursive: true, force: true });
  },
});

let s3: S3rverHandle | undefined;
describeDownloadCaching({
  name: 's3 (s3rver)',
  async open() {
    s3 = await startS3rver();
    return new S3ObjectStore(s3.storeConfig);
  },
  async stop() {
    await s3?.stop();
  },
});
