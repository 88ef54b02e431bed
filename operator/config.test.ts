import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../services/lib/config/index.js';
import { loadOperatorConfig } from './config.js';

describe('operator configuration', () => {
  it('has documented defaults', () => {
    expect(loadOperatorConfig({})).toEqual({
      ingest: { parallelism: 1, backoffLimit: 3 },
      retention: { count: 200, maxAgeSeconds: 604800 },
      resyncSeconds: 300,
    });
  });

  it('reads every setting', () => {
    expect(
      loadOperatorConfig({
        ARGUS_INGEST_PARALLELISM: '4',
        ARGUS_INGEST_BACKOFF_LIMIT: '0',
        ARGUS_JOB_RETENTION_COUNT: '10',
        ARGUS_JOB_RETENTION_SECONDS: '60',
        ARGUS_OPERATOR_RESYNC_SECONDS: '30',
      }),
    ).toEqual({
      ingest: { parallelism: 4, backoffLimit: 0 },
      retention: { count: 10, maxAgeSeconds: 60 },
      resyncSeconds: 30,
    });
  });

  it('refuses bad values, listing every problem', () => {
    const error = (() => {
      try {
        return loadOperatorConfig({ ARGUS_INGEST_PARALLELISM: '0', ARGUS_JOB_RETENTION_COUNT: 'many' });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toHaveLength(2);
  });
});
