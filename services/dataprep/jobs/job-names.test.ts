import { describe, expect, it } from '@jest/globals';
import { isJobName, newJobName } from './job-names.js';

describe('IngestJob names (job_id)', () => {
  it('are DNS-1123 labels short enough for the pods of an indexed Job', () => {
    const name = newJobName();
    expect(name).toMatch(/^ingest-[0-9a-f]{32}$/);
    expect(name.length).toBeLessThanOrEqual(52);
    expect(isJobName(name)).toBe(true);
    expect(newJobName()).not.toBe(name);
  });

  it('refuses what cannot be a name', () => {
    for (const bad of ['', 'Upper', 'a_b', '-a', 'a-', 'a'.repeat(64), '../x']) expect(isJobName(bad)).toBe(false);
  });
});
