/** Public surface of the dataprep media pipeline: embedMedia, its result and telemetry shapes, canonical metadata. */
export { embedMedia } from './embed-media.js';
export type { EmbedMediaDeps, EmbedMediaOptions, EmbedMediaRequest, PipelineLogger } from './embed-request.js';
export { MAX_BATCH_ENTRIES } from './pipeline-stats.js';
export type {
  EmbedBatchStats,
  EmbedMediaResult,
  PipelineStats,
  StageDurations,
  StageThroughput,
} from './pipeline-stats.js';
export {
  assertNoReservedKeys,
  buildEmbeddingMetadata,
  buildSummaryMetadata,
  CANONICAL_METADATA_KEYS,
  isReservedMetadataKey,
  ReservedMetadataKeyError,
} from './metadata.js';
export type { CanonicalMetadataKey, EmbeddingKind, EmbeddingSubject, MediaMetadataBase } from './metadata.js';
export { embeddingRecordId } from './record-id.js';
export { BoundedQueue } from './bounded-queue.js';
