import {
  ITEM_MESSAGE_MAX,
  type IngestItemResult,
  type IngestJob,
  type IngestSource,
} from '../../../operator/api/index.js';
import { updateStatusWithRetry, type ResourceStore, type Worker } from '../../../operator/ports/index.js';
import { DataprepError, isBackendFailure, STORAGE_UNAVAILABLE_MESSAGE } from '../errors.js';
import type { DataprepServices } from '../runtime/services.js';
import { ingestItem } from './ingest-item.js';
import { ItemSkipped } from './item-sources.js';

/**
 * A shard runs its items in order, so when an attempt stops at most two of them lack a stored result: the one running
 * and the one before it, whose result was still being written. Only the first two items a new attempt runs can hold
 * embeddings of an earlier attempt.
 */
const ITEMS_AN_ATTEMPT_MAY_LEAVE = 2;

/** Sources whose items are media stored (or referenced) for this job under a new video id: no embeddings before it. */
const NEW_MEDIA_SOURCES: readonly IngestSource[] = ['upload_batch', 'image_batch', 'directory'];

/** Message of an item that failed unexpectedly (details only in the log). */
export const ITEM_UNEXPECTED_MESSAGE = 'Unexpected failure while processing the item';

function cut(message: string): string {
  return message.length <= ITEM_MESSAGE_MAX ? message : `${message.slice(0, ITEM_MESSAGE_MAX - 1)}…`;
}

/** The result of item `index` of `job`: its outcome, never an exception (except when the shard must stop). */
async function runItem(
  services: DataprepServices,
  job: IngestJob,
  index: number,
  signal: AbortSignal,
  noEarlierRuns: boolean,
): Promise<IngestItemResult> {
  const item = job.spec.items[index];
  const base = { index, identifier: item.identifier, ...(item.videoId ? { videoId: item.videoId } : {}) };
  try {
    const embeddings = await ingestItem(services, { job, index, item, signal, noEarlierRuns });
    return { ...base, status: 'success', embeddingsCount: embeddings };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof ItemSkipped) return { ...base, status: 'skipped', message: cut(error.message) };
    if (error instanceof DataprepError) return { ...base, status: 'error', message: cut(error.message) };
    if (isBackendFailure(error)) return { ...base, status: 'error', message: STORAGE_UNAVAILABLE_MESSAGE };
    services.logger.error('job item failed unexpectedly', {
      job: job.metadata.name,
      index,
      error: (error as Error)?.stack ?? String(error),
    });
    return { ...base, status: 'error', message: ITEM_UNEXPECTED_MESSAGE };
  }
}

/** Adds `result` to the job's status unless that item already has one (another attempt of the shard wrote it). */
function recordResult(resources: ResourceStore, job: IngestJob, result: IngestItemResult) {
  return updateStatusWithRetry(resources, 'IngestJob', job.metadata.namespace, job.metadata.name, (latest) => {
    const items = latest.status?.items ?? [];
    if (items.some((r) => r.index === result.index)) return undefined;
    return { ...latest.status, items: [...items, result].sort((a, b) => a.index - b.index) };
  });
}

/**
 * The ingest worker (`argus worker ingest` in the cluster, a registered in-process worker embedded). Shard `index`
 * of `completions` takes the items with `i % completions === index`, in order, one at a time. Before each item it
 * re-reads the job and stops when `spec.cancelRequested` is set; it skips items that already have a result (so a
 * retried or restarted shard resumes); after each item it writes that item's result with conflict retry (while the
 * next item runs), so shards finishing together never lose each other's results. An item's failure is its result; the worker itself throws only
 * when it cannot go on (the resource store failing, or `signal` aborted — the item in progress is then rolled back
 * and left without a result for the next attempt).
 */
export function ingestWorker(services: DataprepServices, resources: ResourceStore): Worker {
  return async ({ namespace, name, index, completions, signal }) => {
    // The result of an item is written while the next item runs, so the store's durable write is not on the items'
    // path; one write at a time, in item order, and the shard returns only once the last one is stored.
    let writing: Promise<unknown> = Promise.resolve();
    let run = 0;
    try {
      for (let i = index; ; i += completions) {
        signal.throwIfAborted();
        const job = await resources.get('IngestJob', namespace, name);
        if (!job || job.spec.cancelRequested || i >= job.spec.items.length) return;
        if (job.status?.items?.some((r) => r.index === i)) continue;
        const noEarlierRuns = run++ >= ITEMS_AN_ATTEMPT_MAY_LEAVE && NEW_MEDIA_SOURCES.includes(job.spec.source);
        const result = await runItem(services, job, i, signal, noEarlierRuns);
        await writing;
        const write = recordResult(resources, job, result);
        // Awaited before the next write or at the end; this only keeps it from counting as unhandled meanwhile.
        write.catch(() => undefined);
        writing = write;
      }
    } finally {
      await writing;
    }
  };
}
