import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Counter } from 'prom-client';
import { makeTestVideo } from '../../test/support/media.js';
import { ensureDefaultModels } from '../../test/support/models.js';
import { listen, type RunningServer } from '../lib/http/index.js';
import { createLogger } from '../lib/log/index.js';
import { LocalObjectStore, S3ObjectStore, type ObjectStore } from '../lib/storage/index.js';
import { startS3rver, type S3rverHandle } from '../lib/storage/testing/s3rver-server.js';
import { createVectorStore, type VectorStore } from '../lib/vectors/index.js';
import { createApp } from './app.js';
import { loadDataprepConfig, type DataprepConfig } from './config.js';
import { embedMedia } from './pipeline/index.js';
import type { DataprepServices } from './services.js';
import { TelemetryLog } from './telemetry.js';
import { TEST_LIMITS, testModels } from './test/harness.js';

const MIB = 1024 * 1024;
const BUCKET = 'aborts';
const BOUNDARY = 'argus-abort-boundary';

const logger = createLogger({ service: 'upload-abort-test', level: 'error', json: true });
logger.silent = true;

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

/** Resolves with the labels of the next increment of `counter`. */
function nextIncrement(counter: Counter<'reason'>): Promise<unknown> {
  return new Promise((resolve) => {
    const original = counter.inc.bind(counter);
    counter.inc = ((...args: Parameters<typeof original>) => {
      counter.inc = original;
      original(...args);
      resolve(args[0]);
    }) as typeof counter.inc;
  });
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
  let vectors: VectorStore[] = [];
  let body: { preamble: Buffer; file: Buffer; epilogue: Buffer };
  /** Resolves once the server has read `bytes` of the next request's body. */
  let serverHasRead: (bytes: number) => Promise<void>;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'upload-abort-'));
    backend = await openBackend(dataDir);
    const models = await testModels();
    const config: DataprepConfig = loadDataprepConfig({
      ARGUS_DATA_DIR: dataDir,
      ARGUS_MODELS_DIR: await ensureDefaultModels(),
    });
    const lance = config.vectors as Extract<DataprepConfig['vectors'], { backend: 'lancedb' }>;
    const vectorStore = await createVectorStore({
      backend: 'lancedb',
      dir: lance.dir,
      table: lance.table,
      dimension: models.imageEmbedder.dimension,
    });
    const textVectorStore = await createVectorStore({
      backend: 'lancedb',
      dir: lance.dir,
      table: lance.textTable,
      dimension: models.textEmbedder.dimension,
    });
    vectors = [vectorStore, textVectorStore];
    const pipelineDeps = {
      imageEmbedder: models.imageEmbedder,
      detector: models.detector,
      vectors: vectorStore,
      logger,
    };
    const created = createApp({
      config,
      logger,
      objectStore: backend.store,
      vectorStore,
      textVectorStore,
      models,
      embedMedia: (request) => embedMedia(pipelineDeps, request),
      telemetry: await TelemetryLog.open({ maxRecords: 20 }),
      limits: { ...TEST_LIMITS, uploadMaxBytes: 64 * MIB },
      tempDir: path.join(dataDir, 'tmp'),
    });
    services = created.services;
    server = await listen(created.app, { port: 0, host: '127.0.0.1', logger, name: 'upload-abort-test' });

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
    await server?.close();
    for (const store of vectors) await store.close();
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
