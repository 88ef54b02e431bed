import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fixtureImage } from '../../test/support/media.js';
import type { RunningServer } from '../lib/http/index.js';
import { LocalObjectStore } from '../lib/storage/index.js';
import { postJson } from './testing/http-client.js';
import { startHarness, type Harness } from './testing/harness.js';

/** A loopback image server that counts the connections it gets (a refused URL must connect nowhere). */
async function startImageServer(host: string, jpg: Buffer, redirectTo?: () => string) {
  let connections = 0;
  const server = http.createServer((req, res) => {
    if (req.url === '/redirect' && redirectTo) res.writeHead(302, { location: redirectTo() }).end();
    else res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpg);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type ImageServer = Awaited<ReturnType<typeof startImageServer>>;

describe('POST /media/ingest: the image_url address policy (MM_DATAPREP_IMAGE_URL_ALLOW=127.0.0.1/32)', () => {
  let root: string;
  let h: Harness;
  let byDefault: RunningServer;
  let allowed: ImageServer;
  let refusedV4: ImageServer;
  let refusedV6: ImageServer;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'dataprep-url-policy-'));
    h = await startHarness(new LocalObjectStore(path.join(root, 'media')));
    byDefault = await h.variant({ env: { MM_DATAPREP_IMAGE_URL_ALLOW: '' } });
    const jpg = await readFile(fixtureImage('rocket.jpg'));
    refusedV4 = await startImageServer('127.0.0.2', jpg);
    refusedV6 = await startImageServer('::1', jpg);
    allowed = await startImageServer('127.0.0.1', jpg, () => `${refusedV4.url}/photo.jpg`);
  });
  afterAll(async () => {
    await Promise.all([allowed, refusedV4, refusedV6].map((s) => s?.close()));
    await h?.close();
    await rm(root, { recursive: true, force: true });
  });

  const ingest = async (imageUrl: string, base = h.base) => {
    const res = await postJson(`${base}/media/ingest`, {
      type: 'image_url',
      image_url: imageUrl,
      bucket_name: 'url-policy',
    });
    return { status: res.status, body: (await res.json()) as { status: string; message: string } };
  };

  it('refuses 127.0.0.2 and ::1 outside the allow-list with a 400 saying why, connecting nowhere', async () => {
    expect(await ingest(`${refusedV4.url}/photo.jpg`)).toEqual({
      status: 400,
      body: {
        status: 'error',
        message: 'image_url refused: 127.0.0.2 is a loopback address not in MM_DATAPREP_IMAGE_URL_ALLOW',
      },
    });
    expect(await ingest(`${refusedV6.url}/photo.jpg`)).toMatchObject({
      status: 400,
      body: { message: 'image_url refused: ::1 is a loopback address not in MM_DATAPREP_IMAGE_URL_ALLOW' },
    });
    expect(await ingest(`http://[::ffff:127.0.0.2]:${refusedV4.port}/photo.jpg`)).toMatchObject({
      status: 400,
      body: { message: expect.stringMatching(/^image_url refused: ::ffff:7f00:2 is a loopback address/) },
    });
    expect([refusedV4.connections, refusedV6.connections]).toEqual([0, 0]);
  });

  it('re-checks redirects: an allowed server cannot redirect the download to a refused address', async () => {
    const redirected = await ingest(`${allowed.url}/redirect`);
    expect(redirected).toMatchObject({
      status: 400,
      body: { message: 'image_url refused: 127.0.0.2 is a loopback address not in MM_DATAPREP_IMAGE_URL_ALLOW' },
    });
    expect(refusedV4.connections).toBe(0);
    expect((await ingest(`${allowed.url}/photo.jpg`)).status).toBe(201);
  });

  it('refuses loopback by default, by address and by a host name that resolves to it', async () => {
    const before = allowed.connections;
    const base = `${byDefault.url}/v1/dataprep`;
    expect(await ingest(`${allowed.url}/photo.jpg`, base)).toMatchObject({
      status: 400,
      body: { message: 'image_url refused: 127.0.0.1 is a loopback address not in MM_DATAPREP_IMAGE_URL_ALLOW' },
    });
    expect(await ingest(`http://localhost:${allowed.port}/photo.jpg`, base)).toMatchObject({
      status: 400,
      body: {
        message: expect.stringMatching(/^image_url refused: localhost resolves to (127\.0\.0\.1|::1), a loopback/),
      },
    });
    expect(allowed.connections).toBe(before);
  });
});
