import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTestVideo } from '../../test/support/media.js';
import { ensureDefaultModels } from '../../test/support/models.js';

const MIB = 1024 * 1024;
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BOUNDARY = 'argus-shutdown-boundary';
const BUCKET = 'shutdown';

/** Every file below `dir` (relative paths), none when it does not exist. */
async function filesUnder(dir: string): Promise<string[]> {
  const found = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return found
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

/** Resolves with the URL the service logs once it listens (JSON log lines on stdout). */
function listeningUrl(child: ChildProcess, output: { text: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output.text += chunk.toString();
      const line = output.text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .find((l) => l.message === 'dataprep listening');
      if (line) resolve(line.url);
    });
    child.once('exit', (code) => reject(new Error(`argus exited with ${code} before listening: ${output.text}`)));
  });
}

describe('argus serve dataprep, stopped by SIGTERM during an upload', () => {
  let dataDir: string;
  let child: ChildProcess;
  const output = { text: '' };
  const errors = { text: '' };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'dataprep-shutdown-'));
    child = spawn(process.execPath, ['--import', 'tsx', 'bin/argus.ts', 'serve', 'dataprep'], {
      cwd: REPO,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ARGUS_DATA_DIR: dataDir,
        ARGUS_MODELS_DIR: await ensureDefaultModels(),
        ARGUS_LOG_FORMAT: 'json',
        ARGUS_ORT_THREADS: '1',
        ARGUS_SHUTDOWN_GRACE_SECONDS: '20',
        MM_DATAPREP_HOST_PORT: '0',
        MM_DATAPREP_PRELOAD_MODELS: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.on('data', (chunk: Buffer) => (errors.text += chunk.toString()));
  });

  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('aborts the upload, removes its partial files, releases everything and exits 0 within the grace', async () => {
    const url = new URL(await listeningUrl(child, output));
    const video = await readFile(await makeTestVideo({ seconds: 1, fps: 5, width: 64, height: 48 }));
    const file = Buffer.alloc(96 * MIB, 9);
    video.copy(file);
    const head = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="long.mp4"\r\n` +
        'Content-Type: video/mp4\r\n\r\n',
    );
    const length = head.length + file.length + `\r\n--${BOUNDARY}--\r\n`.length;
    const socket = net.connect(Number(url.port), url.hostname);
    socket.on('error', () => undefined);
    const answer = { text: '' };
    socket.on('data', (chunk: Buffer) => (answer.text += chunk.toString()));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(
      `POST /v1/dataprep/media/upload?bucket_name=${BUCKET} HTTP/1.1\r\nHost: ${url.host}\r\n` +
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n\r\n`,
    );
    socket.write(head);
    // 64 MiB accepted by the kernel means the service has read at least 64 MiB minus both socket buffers (at most
    // 36 MiB here): the file is streaming into storage. The rest of the body is never sent.
    await new Promise<void>((resolve, reject) =>
      socket.write(file.subarray(0, 64 * MIB), (error) => (error ? reject(error) : resolve())),
    );
    const partials = path.join(dataDir, 'dataprep', 'media', BUCKET, '.argus-tmp');
    expect((await filesUnder(partials)).length).toBe(1);

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await closed;

    // Exit 0 means the service stopped by itself: a forced exit at the end of the grace is exit 1.
    expect(errors.text).not.toMatch(/grace ran out|deadline passed|shutdown failed/);
    expect(output.text).toMatch(/"dataprep stopped"/);
    // The upload was answered with an error (or cut), never stored: no partial file, no temp copy, no object.
    expect(answer.text).not.toMatch(/^HTTP\/1\.1 201/);
    expect(await filesUnder(path.join(dataDir, 'dataprep', 'media'))).toEqual([]);
    expect(await filesUnder(path.join(dataDir, 'dataprep', 'tmp'))).toEqual([]);
  });
});
