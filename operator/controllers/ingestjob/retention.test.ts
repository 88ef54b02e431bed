import { describe, expect, it } from '@jest/globals';
import type { IngestJob, IngestState } from '../../api/index.js';
import { newIngestJob } from '../../ports/resource-store.contract.js';
import { planRetention } from './retention.js';

const NOW = new Date('2026-01-10T00:00:00Z');

function job(name: string, state: IngestState, finishedHoursAgo: number, namespace = 'default'): IngestJob {
  const fresh = newIngestJob(name, namespace);
  const completionTime = new Date(NOW.getTime() - finishedHoursAgo * 3600_000).toISOString();
  return {
    ...fresh,
    metadata: { ...fresh.metadata, creationTimestamp: '2026-01-01T00:00:00Z' },
    status: { state, ...(state === 'running' || state === 'pending' ? {} : { completionTime }) },
  } as IngestJob;
}

const names = (jobs: IngestJob[]) => jobs.map((j) => j.metadata.name).sort();

describe('planRetention', () => {
  it('keeps the newest `count` finished jobs per namespace and never touches unfinished ones', () => {
    const jobs = [
      job('a1', 'completed', 1),
      job('a2', 'failed', 2),
      job('a3', 'cancelled', 3),
      job('a4', 'running', 100),
      job('a5', 'pending', 100),
      job('b1', 'completed_with_errors', 5, 'other'),
    ];
    const plan = planRetention(jobs, { count: 2, maxAgeSeconds: 30 * 24 * 3600 }, NOW);
    expect(names(plan.expired)).toEqual(['a3']);
  });

  it('deletes finished jobs at the age limit and says when the next one expires', () => {
    const jobs = [job('old', 'completed', 25), job('edge', 'completed', 24), job('young', 'completed', 20)];
    const plan = planRetention(jobs, { count: 100, maxAgeSeconds: 24 * 3600 }, NOW);
    expect(names(plan.expired)).toEqual(['edge', 'old']);
    expect(plan.nextExpiryMs).toBe(4 * 3600_000);
  });

  it('count 0 keeps no finished job; nothing finished means no expiry planned', () => {
    expect(names(planRetention([job('a', 'completed', 0)], { count: 0, maxAgeSeconds: 60 }, NOW).expired)).toEqual([
      'a',
    ]);
    expect(planRetention([job('r', 'running', 0)], { count: 0, maxAgeSeconds: 60 }, NOW)).toEqual({
      expired: [],
      nextExpiryMs: undefined,
    });
  });
});
