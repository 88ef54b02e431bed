import type { VectorRecord } from '../../lib/vectors/vector-store.js';
import type { BoundedQueue } from './bounded-queue.js';
import type { PipelineRun, RecordGroup } from './pipeline-run.js';

/** Inserts the records in chunks of at least `writeBatchSize` (fewer, larger inserts), the rest at the end. */
export async function writeStage(run: PipelineRun, records: BoundedQueue<RecordGroup>): Promise<void> {
  const { deps, clock, counts } = run;
  let pending: VectorRecord[] = [];
  let pendingDescriptions: VectorRecord[] = [];
  const flush = async () => {
    if (pending.length === 0 && pendingDescriptions.length === 0) return;
    run.signal.throwIfAborted();
    const chunk = pending;
    const descriptionChunk = pendingDescriptions;
    pending = [];
    pendingDescriptions = [];
    counts.insertStarted = true;
    await clock.time('write', async () => {
      await deps.vectors.insert(chunk);
      if (descriptionChunk.length > 0) await deps.descriptions!.store.insert(descriptionChunk);
    });
    counts.embeddingsStored += chunk.length;
    clock.count('writes');
  };
  for (let group = await records.take(); group; group = await records.take()) {
    pending.push(...group.images);
    pendingDescriptions.push(...group.descriptions);
    if (pending.length >= run.settings.writeBatchSize) await flush();
  }
  await flush();
}
