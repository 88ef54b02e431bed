import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import http, { type IncomingMessage } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import sharp from 'sharp';
import { makeTestVideo } from '../../test/support/media.js';
import type { RunningServer } from '../lib/http/index.js';
import { createLogger } from '../lib/log/index.js';
import { LocalObjectStore, S3ObjectStore, type ObjectStore } from '../lib/storage/index.js';
import { startS3rver, type S3rverHandle } from '../lib/storage/testing/s3rver-server.js';
import type { DataprepServices } from './runtime/services.js';
import { startDataprepOver } from './testing/app-over-store.js';
import { nextIncrement } from './testing/next-increment.js';

const MIB = 1024 * 1024;
const BUCKET = 'aborts';
const BOUNDARY = 'argus-abort-boundary';

const silentLogger = createLogger({ service: 'io-failures-test', level: 'error', json: true });
silentLogger.silent = true;

/** A logger writing JSON lines into memory, and a way to await one of them. */
function loggerToMemory() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const logger = createLogger({ service: 'io-failures-test', level: 'debug', json: true, streams: { stdout, stderr } });
  /** The first line on stderr with this message. */
  const nextError = (message: string) =>
    new Promise<Record<string, any>>((resolve) => {
      let text = '';
      const onData = (chunk: Buffer) => {
        text += chunk.toString();
        const line = text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
          .find((l) => l.message === message);
        if (!line) return;
        stderr.off('data', onData);
        resolve(line);
      };
      stderr.on('data', onData);
    });
  return { logger, nextError };
}

/** Descriptors of this process open on files below `dir`: what an upload leaks when a stage is never stopped. */
async function openFilesUnder(dir: string): Promise<string[]> {
  const targets = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  return targets.filter((target) => target.startsWith(dir + path.sep)).sort();
}

async function entries(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true }).catch(() => [])).sort();
}

/** A storage backend under test: the store and, for S3, the multipart uploads left on the server. */
interface Backend {
  store: ObjectStore;
  pendingUploads(): Promise<string[]>;
  stop(): Promise<void>;
}

const backends: Array<[string, (dataDir: string) => Promise<Backend>]> = [
  [
    'local',
    async (dataDir) => ({
      store: new LocalObjectStore(path.join(dataDir, 'media')),
      pendingUploads: async () => [],
      stop: async () => undefined,
    }),
  ],
  [
    's3 (s3rver)',
    async () => {
      const s3: S3rverHandle = await startS3rver();
      // Parts of the smallest size S3 allows, so a 12 MiB upload is a multipart upload with parts sent.
      const store = new S3ObjectStore({ ...s3.storeConfig, partSize: 5 * MIB });
      return { store, pendingUploads: () => s3.pendingUploads(BUCKET), stop: () => s3.stop() };
    },
  ],
];

describe.each(backends)('an upload whose client disconnects, on %s storage', (_name, openBackend) => {
  let dataDir: string;
  let backend: Backend;
  let services: DataprepServices;
  let server: RunningServer;
  let closeApp: () => Promise<void>;
  let body: { preamble: Buffer; file: Buffer; epilogue: Buffer };
  /** Resolves once the server has read `bytes` of the next request's body. */
  let serverHasRead: (bytes: number) => Promise<void>;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'io-failures-'));
    backend = await openBackend(dataDir);
    ({ services, server, close: closeApp } = await startDataprepOver(backend.store, dataDir, silentLogger));

    let onRequest: (req: IncomingMessage) => void = () => undefined;
    server.server.on('request', (req: IncomingMessage) => onRequest(req));
    serverHasRead = (bytes) =>
      new Promise((resolve) => {
        onRequest = (req) => {
          // The upload route pipes the body into its parser synchronously; a listener added before would drop data.
          if (req.readableFlowing !== true) throw new Error('the request body is not piped yet');
          let read = 0;
          const onData = (chunk: Buffer) => {
            read += chunk.length;
            if (read < bytes) return;
            req.off('data', onData);
            resolve();
          };
          req.on('data', onData);
        };
      });

    // A real MP4 head (the upload checks the first bytes), then filler up to 12 MiB: the upload never gets to be
    // decoded, it is cut before its end.
    const video = await readFile(await makeTestVideo({ seconds: 1, fps: 5, width: 64, height: 48 }));
    const file = Buffer.alloc(12 * MIB, 7);
    video.copy(file);
    body = {
      preamble: Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nfirst a field\r\n` +
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.mp4"\r\n` +
          'Content-Type: video/mp4\r\n\r\n',
      ),
      file,
      epilogue: Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    };
  });

  afterAll(async () => {
    await closeApp?.();
    await backend?.store.close();
    await backend?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Sends the first `cut` bytes of the upload, waits until the server has read them, then destroys the socket. */
  async function uploadCutAt(cut: number): Promise<void> {
    const whole = Buffer.concat([body.preamble, body.file, body.epilogue]);
    const read = serverHasRead(cut);
    const socket = net.connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(
      `POST /v1/dataprep/media/upload?bucket_name=${BUCKET} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${whole.length}\r\n\r\n`,
    );
    socket.write(whole.subarray(0, cut));
    await read;
    socket.destroy();
  }

  const abortsCounted = async () =>
    (await services.uploadsAborted.get()).values.find((v) => v.labels.reason === 'client_gone')?.value ?? 0;

  const cuts: Array<[string, () => number]> = [
    ['before the file part', () => body.preamble.length - 40],
    ['mid-file, after parts went to storage', () => body.preamble.length + 7 * MIB],
    ['near the end: every file byte, no closing boundary', () => body.preamble.length + body.file.length],
  ];

  it.each(cuts)('cut %s: the handler ends, nothing stays open or stored, the abort is counted', async (_at, cut) => {
    const openBefore = await openFilesUnder(dataDir);
    const tempBefore = await entries(services.tempDir);
    const counted = nextIncrement(services.uploadsAborted);
    const before = await abortsCounted();

    await uploadCutAt(cut());
    // Incremented by the handler after every stage cleaned up: awaiting it is awaiting the handler's end.
    expect(await counted).toEqual({ reason: 'client_gone' });

    expect(await openFilesUnder(dataDir)).toEqual(openBefore);
    expect(await entries(services.tempDir)).toEqual(tempBefore);
    expect(await backend.store.list(BUCKET)).toEqual([]);
    // Partial objects of the local store (`.part` files) and multipart uploads of S3: none left.
    expect(await entries(path.join(dataDir, 'media', BUCKET, '.argus-tmp'))).toEqual([]);
    expect(await backend.pendingUploads()).toEqual([]);
    expect(await abortsCounted()).toBe(before + 1);
  });
});

describe('a download whose storage stream breaks mid-body (S3 server lost)', () => {
  let dataDir: string;
  let s3: S3rverHandle;
  let store: S3ObjectStore;
  let app: Awaited<ReturnType<typeof startDataprepOver>>;
  const logs = loggerToMemory();
  const size = 24 * MIB;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'io-failures-'));
    s3 = await startS3rver();
    store = new S3ObjectStore(s3.storeConfig);
    await store.put(BUCKET, 'clip/clip.mp4', Buffer.alloc(size, 5), { contentType: 'video/mp4' });
    app = await startDataprepOver(store, dataDir, logs.logger);
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await s3?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('cuts the response short, logs the failure with the request id and counts it', async () => {
    const logged = logs.nextError('response failed after it began');
    const url = `${app.server.url}/v1/dataprep/media/download?bucket_name=${BUCKET}&video_id=clip`;
    const answer = await new Promise<{ status: number; requestId: string; received: number; complete: boolean }>(
      (resolve, reject) => {
        const req = http.get(url, (res) => {
          let received = 0;
          const done = (complete: boolean) =>
            resolve({ status: res.statusCode!, requestId: String(res.headers['x-request-id']), received, complete });
          res.once('data', (first: Buffer) => {
            received += first.length;
            // The body has begun: the storage server goes away while the rest is still to come.
            res.pause();
            void s3.crash().then(() => {
              res.on('data', (chunk: Buffer) => (received += chunk.length));
              res.resume();
            });
          });
          res.on('end', () => done(true));
          res.on('aborted', () => done(false));
          res.on('error', () => done(false));
        });
        req.on('error', reject);
      },
    );
    expect(answer.status).toBe(200);
    expect(answer.complete).toBe(false);
    expect(answer.received).toBeLessThan(size);
    const line = await logged;
    expect(line).toMatchObject({ level: 'error', requestId: answer.requestId, path: '/v1/dataprep/media/download' });
    const failures = await app.metrics.registry.getSingleMetric('http_response_stream_errors_total')!.get();
    expect(failures.values).toEqual([{ value: 1, labels: { route: '/v1/dataprep/media/download' } }]);
  });
});

/** Bytes this process has written to storage devices so far (Linux task I/O accounting, every thread). */
async function bytesWritten(): Promise<number> {
  const io = await readFile('/proc/self/io', 'utf8');
  return Number(/^write_bytes: (\d+)$/m.exec(io)![1]);
}

describe.each(backends)('bytes written for an upload and a re-process, on %s storage', (_name, openBackend) => {
  let dataDir: string;
  let backend: Backend;
  let app: Awaited<ReturnType<typeof startDataprepOver>>;
  let image: Buffer;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'io-failures-'));
    backend = await openBackend(dataDir);
    app = await startDataprepOver(backend.store, dataDir, silentLogger);
    // Noise does not compress: a PNG of about 19 MB, so the media dwarfs what the vectors and markers add.
    const side = 2500;
    const noise = Buffer.alloc(side * side * 3);
    for (let i = 0; i < noise.length; i += 4) noise.writeUInt32LE((Math.random() * 0xffffffff) >>> 0, i);
    image = await sharp(noise.subarray(0, side * side * 3), { raw: { width: side, height: side, channels: 3 } })
      .png({ compressionLevel: 1 })
      .toBuffer();
  });
  afterAll(async () => {
    await app?.close();
    await backend?.store.close();
    await backend?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('writes each uploaded byte once locally, and re-processing writes no copy where the store keeps files', async () => {
    const before = await bytesWritten();
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'noise.png');
    const base = `${app.server.url}/v1/dataprep`;
    const res = await fetch(`${base}/media/upload?bucket_name=${BUCKET}&enable_object_detection=false`, {
      method: 'POST',
      body: form,
    });
    expect(res.status).toBe(201);
    const { video_id: videoId } = await res.json();
    const perUploadedByte = ((await bytesWritten()) - before) / image.length;
    // Local store: the stored file only (the pipeline reads it). S3: the temp copy only (the object goes over HTTP).
    expect(perUploadedByte).toBeGreaterThan(0.9);
    expect(perUploadedByte).toBeLessThan(1.2);

    const beforeProcess = await bytesWritten();
    const processed = await fetch(`${base}/media/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ bucket_name: BUCKET, video_id: videoId, enable_object_detection: false }),
    });
    expect(processed.status).toBe(201);
    const perStoredByte = ((await bytesWritten()) - beforeProcess) / image.length;
    // S3 objects are downloaded to a temp file once; local ones are read where they are.
    if (backend.store.hasLocalFiles) expect(perStoredByte).toBeLessThan(0.2);
    else expect(perStoredByte).toBeLessThan(1.2);
    expect(await entries(app.services.tempDir)).toEqual([]);
  });
});
