import { afterAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fixtureImage } from '../../test/support/media.js';
import { ensureDefaultModels } from '../../test/support/models.js';
import { createLogger } from '../lib/log/index.js';
import { loadDataprepConfig } from './config.js';
import { startDataprep } from './main.js';

const logger = createLogger({ service: 'dataprep-main-test', level: 'error', json: true });

describe('startDataprep', () => {
  let dataDir: string | undefined;
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('starts from the environment, serves the API and keeps media and telemetry across a restart', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'dataprep-main-'));
    const env = {
      ARGUS_DATA_DIR: dataDir,
      ARGUS_MODELS_DIR: await ensureDefaultModels(),
      ARGUS_ORT_THREADS: '1',
      MM_DATAPREP_HOST_PORT: '0',
    };
    const first = await startDataprep(loadDataprepConfig(env), logger);
    let videoId: string;
    try {
      expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const health = await (await fetch(`${first.url}/v1/dataprep/health`)).json();
      expect(health).toMatchObject({
        embedding_client_status: 'preloaded',
        storage_backend: 'local',
        vectordb_backend: 'lancedb',
      });
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(await readFile(fixtureImage('rocket.jpg')))]), 'rocket.jpg');
      const res = await fetch(`${first.url}/v1/dataprep/media/upload?enable_object_detection=false`, {
        method: 'POST',
        body: form,
      });
      expect(res.status).toBe(201);
      videoId = (await res.json()).video_id;
      const docs = await fetch(`${first.url}/openapi.json`);
      expect(Object.keys((await docs.json()).paths)).toContain('/v1/dataprep/media/download');
    } finally {
      await first.close();
    }
    const second = await startDataprep(loadDataprepConfig(env), logger);
    try {
      const list = await (await fetch(`${second.url}/v1/dataprep/media`)).json();
      expect(list.bucket_name).toBe('argus-media');
      expect(list.videos.map((v: any) => v.video_id)).toEqual([videoId]);
      const telemetry = await (await fetch(`${second.url}/v1/dataprep/telemetry`)).json();
      expect(telemetry.count).toBe(1);
      expect(telemetry.items[0].video.video_id).toBe(videoId);
    } finally {
      await second.close();
    }
  });

  it('refuses to start with invalid configuration', () => {
    expect(() => loadDataprepConfig({ MM_DATAPREP_UNKNOWN: 'x' })).toThrow(/MM_DATAPREP_UNKNOWN/);
  });
});
