import type { IngestJob } from '../../../operator/api/index.js';
import type { DataprepServices } from '../runtime/services.js';
import { prepareItem, type ItemRun, type PreparedItem } from './item-sources.js';

/** The endpoint each job source came from, recorded in telemetry. */
const SOURCE_PATHS: Record<IngestJob['spec']['source'], string> = {
  upload_batch: '/media/upload/batch',
  batch_existing: '/media/process/batch',
  image_batch: '/media/ingest/batch',
  directory: '/media/ingest-dir',
};

/**
 * Runs one item of a job to its embeddings: prepares its media by source, then `MediaProcessing.process` (duplicate
 * policy, pipeline, replace-on-success, marker, telemetry). Resolves with the number of embeddings stored; throws the
 * item's failure (ItemSkipped, a domain error or anything unexpected) after removing what the item created — except
 * when `signal` aborted, where everything is left for the retry to pick up.
 */
export async function ingestItem(services: DataprepServices, run: ItemRun): Promise<number> {
  const { spec } = run.job;
  let prepared: PreparedItem | undefined;
  try {
    prepared = await prepareItem(services, run);
    const { result } = await services.processing.process({
      source: `${services.basePath}${SOURCE_PATHS[spec.source]}`,
      requestId: `${run.job.metadata.name}/${run.index}`,
      media: prepared.media,
      kind: prepared.kind,
      local: prepared.local,
      options: {
        frameInterval: spec.frameInterval,
        detectionEnabled: spec.detection.enabled,
        detectionConfidence: spec.detection.confidence,
        tags: prepared.tags ?? spec.tags,
      },
      // The item's video id is fixed by the job, so a re-run replaces its embeddings: never "owned" here.
      ownsStoredMedia: false,
      enforceDuplicatePolicy: prepared.enforceDuplicatePolicy,
      noEarlierRuns: run.noEarlierRuns,
      metadata: prepared.metadata,
      sourcePath: prepared.sourcePath,
      signal: run.signal,
    });
    await prepared.afterSuccess?.();
    return result.embeddingsStored;
  } catch (error) {
    if (!run.signal.aborted && prepared?.undo) {
      await prepared.undo().catch((undoError: Error) =>
        services.logger.error('removing a failed job item failed', {
          job: run.job.metadata.name,
          index: run.index,
          error: undoError.message,
        }),
      );
    }
    throw error;
  }
}
