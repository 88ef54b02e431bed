import type { CaptionRun } from '../../api/index.js';
import { isFinished } from './reconcile.js';

/** How many finished runs to keep per namespace, and for how long. */
export interface CaptionRunRetention {
  count: number;
  maxAgeSeconds: number;
}

/** The runs to delete now, and when the next kept run expires (ms from `now`; undefined when none will). */
export interface CaptionRunRetentionPlan {
  expired: CaptionRun[];
  nextExpiryMs?: number;
}

/**
 * Which finished runs (Stopped or Failed) the retention removes: per namespace, every one beyond the `count` most
 * recently finished, and every one that finished `maxAgeSeconds` or more ago (by `status.finishedTime`). Runs that
 * have not finished are never touched.
 */
export function planCaptionRunRetention(
  runs: CaptionRun[],
  policy: CaptionRunRetention,
  now: Date,
): CaptionRunRetentionPlan {
  const byNamespace = new Map<string, CaptionRun[]>();
  for (const run of runs.filter(isFinished)) {
    const list = byNamespace.get(run.metadata.namespace) ?? [];
    list.push(run);
    byNamespace.set(run.metadata.namespace, list);
  }
  const expired: CaptionRun[] = [];
  let nextExpiryMs: number | undefined;
  for (const list of byNamespace.values()) {
    list.sort((a, b) => finishedAt(b) - finishedAt(a) || b.metadata.name.localeCompare(a.metadata.name));
    list.forEach((run, rank) => {
      const expiresInMs = finishedAt(run) + policy.maxAgeSeconds * 1000 - now.getTime();
      if (rank >= policy.count || expiresInMs <= 0) expired.push(run);
      else nextExpiryMs = Math.min(nextExpiryMs ?? Infinity, expiresInMs);
    });
  }
  return { expired, nextExpiryMs };
}

function finishedAt(run: CaptionRun): number {
  return Date.parse(run.status?.finishedTime ?? run.metadata.creationTimestamp ?? '') || 0;
}
