import { describe, expect, it } from '@jest/globals';
import { INGEST_MAX_ITEMS } from '../../../operator/api/index.js';
import { loadDataprepConfig } from '../config.js';

describe('MM_DATAPREP_BATCH_MAX_ITEMS', () => {
  it('may lower the resource API bound of a job, never raise it', () => {
    expect(loadDataprepConfig({ MM_DATAPREP_BATCH_MAX_ITEMS: String(INGEST_MAX_ITEMS) }).batchMaxItems).toBe(
      INGEST_MAX_ITEMS,
    );
    expect(() => loadDataprepConfig({ MM_DATAPREP_BATCH_MAX_ITEMS: String(INGEST_MAX_ITEMS + 1) })).toThrow(
      /MM_DATAPREP_BATCH_MAX_ITEMS/,
    );
  });
});
