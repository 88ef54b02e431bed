import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fixtureImage, makeTestVideo } from '../../test/support/media.js';
import { S3ObjectStore } from '../lib/storage/index.js';
import { startS3rver, type S3rverHandle } from '../lib/storage/testing/s3rver-server.js';
import { postJson } from './testing/http-client.js';
import { startJobHarness, type JobHarness } from './testing/job-harness.js';

/**
 * The batch paths that move bytes, on the S3 adapter (s3rver): upload/batch parts streamed to S3 while hashed, the
 * worker reading stored media back from S3 (no local files), and a directory copied into S3 by the worker.
 */
describe('dataprep batch jobs on S3 storage (s3rver)', () => {
  let s3: S3rverHandle;
  let h: JobHarness;

  beforeAll(async () => {
    s3 = await startS3rver();
    h = await startJobHarness({ objectStore: new S3ObjectStore(s3.storeConfig) });
  });

  afterAll(async () => {
    await h?.close();
    await s3?.stop();
  });

  it('upload/batch stores the files in S3 and the job embeds them from there', async () => {
    const form = new FormData();
    for (const [n, name] of [
      [0, 'a.mp4'],
      [1, 'b.mp4'],
    ] as const) {
      const bytes = await readFile(await makeTestVideo({ seconds: 1, fps: 4, width: 72 + 8 * n, height: 56 }));
      form.append('files', new Blob([new Uint8Array(bytes)], { type: 'video/mp4' }), name);
    }
    const res = await fetch(`${h.base}/media/upload/batch?bucket_name=s3-batch&enable_object_detection=false`, {
      method: 'POST',
      body: form,
    });
    expect(res.status).toBe(202);
    const done = await h.waitForJob((await res.json()).job_id);
    expect(done).toMatchObject({ state: 'completed', completed: 2 });
    expect((await h.objectStore.list('s3-batch')).map((o) => o.key.split('/')[1]).sort()).toEqual(['a.mp4', 'b.mp4']);
  });

  it('ingest-dir with store_copy copies each file into S3 when its turn comes', async () => {
    const dir = path.join(h.ingestRoot, 'shots');
    await mkdir(dir, { recursive: true });
    const photo = await readFile(fixtureImage('person_multi_det.jpg'));
    await writeFile(path.join(dir, 'person.jpg'), photo);
    const res = await postJson(`${h.base}/media/ingest-dir`, {
      dir_path: 'shots',
      bucket_name: 's3-dir',
      enable_object_detection: false,
    });
    expect(res.status).toBe(202);
    const done = await h.waitForJob((await res.json()).job_id);
    expect(done).toMatchObject({ state: 'completed', completed: 1 });
    const [stored] = await h.objectStore.list('s3-dir');
    expect(stored).toMatchObject({ key: `${done.items[0].video_id}/person.jpg`, size: photo.length });
  });
});
