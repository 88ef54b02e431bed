import type { IngestJob } from '../../api/index.js';
import { isTerminal } from './reconcile.js';

/** How many finished jobs to keep per namespace, and for how long. */
export interface RetentionPolicy {
  count: number;
  maxAgeSeconds: number;
}

/** The jobs to delete now, and when the next kept job expires (ms from `now`; undefined when none will). */
export interface RetentionPlan {
  expired: IngestJob[];
  nextExpiryMs?: number;
}

/**
 * Which finished jobs the retention removes: per namespace, every finished job beyond the `count` most recently
 * finished ones, and every finished job that finished `maxAgeSeconds` or more ago. Jobs still pending or running
 * are never touched.
 */
export function planRetention(jobs: IngestJob[], policy: RetentionPolicy, now: Date): RetentionPlan {
  const byNamespace = new Map<string, IngestJob[]>();
  for (const job of jobs.filter(isTerminal)) {
    const list = byNamespace.get(job.metadata.namespace) ?? [];
    list.push(job);
    byNamespace.set(job.metadata.namespace, list);
  }
  const expired: IngestJob[] = [];
  let nextExpiryMs: number | undefined;
  for (const list of byNamespace.values()) {
    list.sort((a, b) => finishedAt(b) - finishedAt(a) || b.metadata.name.localeCompare(a.metadata.name));
    list.forEach((job, rank) => {
      const expiresInMs = finishedAt(job) + policy.maxAgeSeconds * 1000 - now.getTime();
      if (rank >= policy.count || expiresInMs <= 0) expired.push(job);
      else nextExpiryMs = Math.min(nextExpiryMs ?? Infinity, expiresInMs);
    });
  }
  return { expired, nextExpiryMs };
}

function finishedAt(job: IngestJob): number {
  return Date.parse(job.status?.completionTime ?? job.metadata.creationTimestamp ?? '') || 0;
}
