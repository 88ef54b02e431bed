import { ITEM_MESSAGE_MAX } from '../../../api/index.js';
import type { IngestItem, IngestItemResult } from '../../../api/index.js';
import { updateStatusWithRetry, type ResourceStore, type Worker } from '../../../ports/index.js';

/** The outcome of one item, as the item function reports it. */
export type ItemOutcome = Pick<IngestItemResult, 'status' | 'message' | 'embeddingsCount'>;

/**
 * An ingest worker following the shard protocol of the control plane, around an `item` function standing in for
 * dataprep's pipeline: shard `index` takes the items with `i % completions === index` in order; before each it
 * re-reads the job and stops on `cancelRequested`; it skips items that already have a result; an item that throws is
 * an `error` result (the next item still runs); each result is written with updateStatusWithRetry.
 */
export function itemWorker(
  store: ResourceStore,
  item: (item: IngestItem, index: number, signal: AbortSignal) => Promise<ItemOutcome>,
): Worker {
  return async ({ namespace, name, index: shard, completions, signal }) => {
    for (let i = shard; ; i += completions) {
      signal.throwIfAborted();
      const job = await store.get('IngestJob', namespace, name);
      if (!job || job.spec.cancelRequested || i >= job.spec.items.length) return;
      if (job.status?.items?.some((r) => r.index === i)) continue;
      const spec = job.spec.items[i];
      let outcome: ItemOutcome;
      try {
        outcome = await item(spec, i, signal);
      } catch (error) {
        signal.throwIfAborted();
        outcome = {
          status: 'error',
          message: (error instanceof Error ? error.message : String(error)).slice(0, ITEM_MESSAGE_MAX),
        };
      }
      const result: IngestItemResult = { index: i, identifier: spec.identifier, videoId: spec.videoId, ...outcome };
      await updateStatusWithRetry(store, 'IngestJob', namespace, name, (latest) => {
        const items = latest.status?.items ?? [];
        if (items.some((r) => r.index === i)) return undefined;
        return { ...latest.status, items: [...items, result] };
      });
    }
  };
}
