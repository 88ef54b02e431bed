import { CURRENT_IMAGE_DESCRIPTOR, imageDescriptor } from '../../lib/inference/image-descriptor.js';
import type { VectorRecord } from '../../lib/vectors/vector-store.js';
import type { BoundedQueue } from './bounded-queue.js';
import type { EmbedMediaRequest } from './embed-request.js';
import { buildEmbeddingMetadata, type EmbeddingSubject } from './metadata.js';
import type { EmbedItem, PipelineRun, RecordGroup } from './pipeline-run.js';
import { round3 } from './pipeline-stats.js';
import { embeddingRecordId } from './record-id.js';

/** Distinct description texts whose vectors a run keeps (consecutive frames mostly repeat theirs). */
const DESCRIPTION_CACHE_ENTRIES = 512;

/** Text vectors of a run's descriptions: consecutive frames of a scene mostly share one, so each distinct text is embedded once. */
class DescriptionVectors {
  private readonly known = new Map<string, Float32Array>();

  constructor(private readonly run: PipelineRun) {}

  /** The vector of each text, embedding in one call those this run has not seen (or no longer keeps). */
  async of(texts: string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((text) => !this.known.has(text)))];
    const fresh = new Map<string, Float32Array>();
    if (missing.length > 0) {
      const sink = this.run.deps.descriptions!;
      const vectors = await this.run.clock.time('embed', () =>
        this.run.gates.embed(() => sink.textEmbedder.embed(missing)),
      );
      missing.forEach((text, i) => fresh.set(text, vectors[i]));
    }
    const result = texts.map((text) => (fresh.get(text) ?? this.known.get(text))!);
    if (this.known.size + fresh.size > DESCRIPTION_CACHE_ENTRIES) this.known.clear();
    for (const [text, vector] of fresh) this.known.set(text, vector);
    return result;
  }
}

/** The next batch of up to `size` items; empty once the queue is closed and drained. */
async function takeBatch(items: BoundedQueue<EmbedItem>, size: number): Promise<EmbedItem[]> {
  const batch: EmbedItem[] = [];
  while (batch.length < size) {
    const item = await items.take();
    if (!item) break;
    batch.push(item);
  }
  return batch;
}

/** Embeds items in batches of `embedBatchSize` into records: image vectors, and text vectors of their descriptions. */
export async function embedStage(
  run: PipelineRun,
  items: BoundedQueue<EmbedItem>,
  records: BoundedQueue<RecordGroup>,
): Promise<void> {
  const { deps, request, clock, settings } = run;
  const descriptions = new DescriptionVectors(run);
  const descriptor = imageDescriptor(deps.imageEmbedder, deps.imageDescriptor ?? CURRENT_IMAGE_DESCRIPTOR);
  for (;;) {
    const batch = await takeBatch(items, settings.embedBatchSize);
    if (batch.length === 0) return;
    const started = clock.elapsed();
    const vectors = await clock.time('embed', () =>
      descriptor.embed(
        batch.map((item) => item.image),
        { gate: run.gates.embed },
      ),
    );
    if (vectors.length !== batch.length)
      throw new Error(`embedder returned ${vectors.length} vectors for ${batch.length} images`);
    const createdAt = new Date().toISOString();
    const images = batch.map((item, i): VectorRecord => ({
      id: recordId(request, run.runId, item.subject),
      vector: vectors[i],
      metadata: {
        ...buildEmbeddingMetadata(run.base, item.subject, createdAt),
        image_descriptor: descriptor.descriptor,
      },
    }));
    const described = batch.filter((item) => item.description !== undefined);
    const textVectors = await descriptions.of(described.map((item) => item.description!.text));
    const descriptionRecords = described.map((item, i): VectorRecord => {
      const { text, positions } = item.description!;
      const metadata = buildEmbeddingMetadata(run.base, item.subject, createdAt);
      metadata.description = text;
      if (positions) metadata.positions = positions;
      return { id: recordId(request, run.runId, item.subject, 'description'), vector: textVectors[i], metadata };
    });
    run.counts.itemsEmbedded += batch.length;
    run.batches.add({
      index: run.batches.total,
      items: batch.length,
      crops: batch.filter((item) => item.subject.kind === 'crop').length,
      first_frame_id: batch[0].subject.frameId,
      last_frame_id: batch[batch.length - 1].subject.frameId,
      started_at_s: round3(started),
      embed_s: round3(clock.elapsed() - started),
    });
    await records.push({ images, descriptions: descriptionRecords });
  }
}

function recordId(request: EmbedMediaRequest, runId: string, subject: EmbeddingSubject, store?: 'description'): string {
  const crop = subject.kind === 'crop' ? subject.cropId : -1;
  const parts = [request.bucketName, request.videoId, runId, subject.kind, subject.frameId, crop];
  return embeddingRecordId(store ? [...parts, store] : parts);
}
