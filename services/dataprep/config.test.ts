import { describe, expect, it } from '@jest/globals';
import path from 'node:path';
import { ConfigError } from '../lib/config/index.js';
import { loadDataprepConfig } from './config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadDataprepConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('dataprep config', () => {
  it('applies the documented defaults', () => {
    const config = loadDataprepConfig({ ARGUS_DATA_DIR: '/srv/argus', PATH: '/bin' });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 6007,
      allowDuplicateUploads: false,
      batchMaxItems: 100,
      telemetryMaxRecords: 1000,
      defaultBucket: 'argus-media',
      markerBucket: 'argus-dataprep-markers',
      dataDir: path.resolve('/srv/argus/dataprep'),
      urlTimeoutMs: 30_000,
      urlMaxRedirects: 5,
      storage: { backend: 'local', root: path.resolve('/srv/argus/dataprep/media') },
      vectors: {
        backend: 'lancedb',
        dir: path.resolve('/srv/argus/dataprep/vectors'),
        table: 'argus_media',
        textTable: 'argus_media_text',
      },
    });
  });

  it('maps the S3 and Weaviate settings', () => {
    const config = loadDataprepConfig({
      MM_DATAPREP_STORAGE_BACKEND: 's3',
      MM_DATAPREP_S3_ENDPOINT: 'http://minio:9000',
      MM_DATAPREP_S3_ACCESS_KEY_ID: 'key',
      MM_DATAPREP_S3_SECRET_ACCESS_KEY: 'secret',
      MM_DATAPREP_S3_FORCE_PATH_STYLE: 'true',
      MM_DATAPREP_S3_CHECKSUM_MODE: 'when_required',
      MM_DATAPREP_VECTORDB_BACKEND: 'weaviate',
      MM_DATAPREP_WEAVIATE_URL: 'http://weaviate:8080',
      MM_DATAPREP_WEAVIATE_COLLECTION: 'Media',
      MM_DATAPREP_ALLOW_DUPLICATE_UPLOADS: 'yes',
      MM_DATAPREP_URL_TIMEOUT_SECONDS: '2.5',
    });
    expect(config.storage).toEqual({
      backend: 's3',
      endpoint: 'http://minio:9000',
      region: 'us-east-1',
      accessKeyId: 'key',
      secretAccessKey: 'secret',
      sessionToken: undefined,
      forcePathStyle: true,
      checksumWhenRequired: true,
      bucketPrefix: undefined,
    });
    expect(config.vectors).toMatchObject({
      backend: 'weaviate',
      url: 'http://weaviate:8080',
      collection: 'Media',
      textCollection: 'MediaText',
    });
    expect(config.allowDuplicateUploads).toBe(true);
    expect(config.urlTimeoutMs).toBe(2500);
  });

  it('lists every problem at once, unknown MM_DATAPREP_ variables included', () => {
    const problems = problemsOf({
      MM_DATAPREP_HOST_PORT: '99999',
      MM_DATAPREP_DEFAULT_BUCKET: 'Not_A_Bucket',
      MM_DATAPREP_STORAGE_BACKEND: 'ftp',
      MM_DATAPREP_TYPO: '1',
      MM_DATAPREP_S3_ACCESS_KEY_ID: 'only-the-key',
      ARGUS_ORT_PROVIDER: 'tpu',
    });
    const text = problems.join('\n');
    expect(text).toMatch(/MM_DATAPREP_TYPO is not a known setting/);
    expect(text).toMatch(/MM_DATAPREP_HOST_PORT/);
    expect(text).toMatch(/MM_DATAPREP_DEFAULT_BUCKET/);
    expect(text).toMatch(/MM_DATAPREP_STORAGE_BACKEND/);
    expect(text).toMatch(/MM_DATAPREP_S3_SECRET_ACCESS_KEY/);
    expect(text).toMatch(/ARGUS_ORT_PROVIDER/);
    expect(problems.length).toBeGreaterThanOrEqual(6);
  });

  it('requires a Weaviate URL with the weaviate backend', () => {
    expect(problemsOf({ MM_DATAPREP_VECTORDB_BACKEND: 'weaviate' }).join('\n')).toMatch(/MM_DATAPREP_WEAVIATE_URL/);
    expect(problemsOf({})).toEqual([]);
  });

  it('reads the image_url allow-list (CIDRs and host names) and names a bad entry', () => {
    expect(loadDataprepConfig({}).imageUrlAllow.entries).toEqual([]);
    const allow = loadDataprepConfig({ MM_DATAPREP_IMAGE_URL_ALLOW: '10.20.0.0/16, camera-1.lan' }).imageUrlAllow;
    expect([allow.hasAddress('10.20.3.4'), allow.hasHost('CAMERA-1.lan'), allow.hasAddress('10.21.0.1')]).toEqual([
      true,
      true,
      false,
    ]);
    expect(problemsOf({ MM_DATAPREP_IMAGE_URL_ALLOW: '10.0.0.0/8,10.0.0.0/99' })).toEqual([
      '"MM_DATAPREP_IMAGE_URL_ALLOW": "10.0.0.0/99" is not a valid CIDR',
    ]);
  });
});
