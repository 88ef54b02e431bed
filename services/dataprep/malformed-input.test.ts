import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { malformedSweep } from '../../test/support/malformed-sweep.js';
import { LocalObjectStore } from '../lib/storage/index.js';
import { startHarness, type Harness } from './testing/harness.js';
import { DATAPREP_SWEEP, isStatusMessageBody, MP4_HEAD } from './testing/sweep-endpoints.js';

const MIB = 1024 * 1024;

/** Every file below `root` (relative paths), none when it does not exist. */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

describe('dataprep against malformed input', () => {
  let dir: string;
  let h: Harness;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dataprep-sweep-'));
    h = await startHarness(new LocalObjectStore(path.join(dir, 'media')));
  });
  afterAll(async () => {
    await h?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers every malformed request 4xx in {status, message}, never 500, never a stack trace', async () => {
    const report = await malformedSweep({
      base: h.base,
      endpoints: DATAPREP_SWEEP,
      errorShape: isStatusMessageBody,
      health: [`${h.base}/health`],
    });
    expect(report.failures).toEqual([]);
    expect(report.cases).toBeGreaterThan(200);
    // Uploads cut short while they were being stored left nothing behind, not even a temporary file.
    expect(await filesUnder(path.join(dir, 'media'))).toEqual([]);
  });

  it('removes the stored first file of a batch whose second file is cut short, and answers 400', async () => {
    const part = (name: string) =>
      `--b0undary\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\n\r\n`;
    const video = Buffer.concat([MP4_HEAD, Buffer.alloc(64 * 1024, 7)]);
    const body = Buffer.concat([Buffer.from(part('one.mp4')), video, Buffer.from('\r\n' + part('two.mp4')), video]);
    const res = await fetch(`${h.base}/media/upload/batch`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b0undary' },
      body: new Uint8Array(body.subarray(0, body.length - 1000)),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      status: 'error',
      message: 'Malformed multipart/form-data body: the body ends before the closing boundary',
    });
    expect(await filesUnder(path.join(dir, 'media'))).toEqual([]);
  });

  it('answers an undecodable gzip body 400 and a gzip bomb 413 in the contract shape (was 500)', async () => {
    const post = (body: Buffer) =>
      fetch(`${h.base}/media/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: new Uint8Array(body),
      });
    const bad = await post(Buffer.from('{"type":"image_base64"}'));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      status: 'error',
      message: 'The body could not be decoded (Content-Encoding: gzip)',
    });
    const bomb = await post(zlib.gzipSync(Buffer.alloc(64 * MIB, 0x20)));
    expect(bomb.status).toBe(413);
    expect((await bomb.json()).message).toMatch(/once decoded/);
  });

  describe('early rejections reach fetch, never a reset (5 tries per path, tens of MB)', () => {
    /** A one-file multipart body, built once, sent by fetch as it is. */
    const form = (field: string, name: string, bytes: Buffer) => {
      const head = `--b0undary\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\n\r\n`;
      return new Uint8Array(Buffer.concat([Buffer.from(head), bytes, Buffer.from('\r\n--b0undary--\r\n')]));
    };
    const upload = (url: string, body: Uint8Array<ArrayBuffer>) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b0undary' }, body });
    // Past the 16 MiB the kit drops before answering: answered at once, the connection closed gracefully.
    const bytes = Buffer.alloc(24 * MIB, 0x61);
    const mkv = form('file', 'clip.mkv', bytes);
    const mp4 = form('file', 'clip.mp4', Buffer.concat([MP4_HEAD, bytes]));
    const batchMkv = form('files', 'clip.mkv', bytes);
    const json = new Uint8Array(100 * MIB).fill(0x20);
    const cases: Array<[string, () => Promise<Response>, number, RegExp]> = [
      ['.mkv upload', () => upload(`${h.base}/media/upload`, mkv), 400, /Unsupported media type/],
      ['bad query parameter', () => upload(`${h.base}/media/upload?frame_interval=abc`, mp4), 400, /frame_interval/],
      ['upload cap', () => upload(`${h.base}/media/upload`, mp4), 413, /File too large/],
      ['.mkv in a batch', () => upload(`${h.base}/media/upload/batch`, batchMkv), 400, /Unsupported media type/],
      [
        '100 MB JSON body',
        () =>
          fetch(`${h.base}/media/ingest`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: json,
          }),
        413,
        /larger than/,
      ],
    ];
    for (const [name, send, status, message] of cases) {
      it(
        name,
        async () => {
          for (let i = 0; i < 5; i++) {
            const res = await send();
            expect(res.status).toBe(status);
            expect(await res.json()).toEqual({ status: 'error', message: expect.stringMatching(message) });
          }
        },
        120_000,
      );
    }
  });
});
