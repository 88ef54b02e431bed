import { ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { S3ObjectStoreConfig } from '../s3-store.js';

/** A running s3rver for tests, and the store settings that talk to it. */
export interface S3rverHandle {
  endpoint: string;
  /** Settings for S3ObjectStore against this server (path style, checksums only when required). */
  storeConfig: S3ObjectStoreConfig;
  /** Keys of the multipart uploads started and neither completed nor aborted in a (physical) bucket. */
  pendingUploads(bucket: string): Promise<string[]>;
  /** Kills the server at once (SIGKILL), as a crash or a lost node would: open connections break mid-transfer. */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Starts s3rver on 127.0.0.1 (a free port) with a fresh temp directory, in a child process started with
 * `--openssl-legacy-provider` so that paginated listings work; `stop()` ends it and removes the directory.
 */
export async function startS3rver(): Promise<S3rverHandle> {
  const directory = await mkdtemp(join(tmpdir(), 's3rver-'));
  const child: ChildProcess = fork(join(here, 's3rver-child.mjs'), [directory], {
    execArgv: ['--openssl-legacy-provider', '--no-warnings'],
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { port: number }).port));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`s3rver exited early with code ${code}`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const storeConfig = {
    endpoint,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
    checksumWhenRequired: true,
  };
  const client = new S3Client({
    endpoint,
    region: storeConfig.region,
    forcePathStyle: true,
    credentials: { accessKeyId: storeConfig.accessKeyId, secretAccessKey: storeConfig.secretAccessKey },
  });
  return {
    endpoint,
    storeConfig,
    async pendingUploads(bucket) {
      const out = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
      return (out.Uploads ?? []).map((upload) => upload.Key ?? '');
    },
    async crash() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      client.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.send('stop');
        await exited;
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
}
