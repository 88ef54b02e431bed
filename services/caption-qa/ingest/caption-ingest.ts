import type { ImageEmbedder, RgbImage, TextEmbedder } from '../../lib/inference/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { MetadataValue, VectorRecord, VectorStore } from '../../lib/vectors/index.js';
import { readFrameImage, type FrameLimits } from '../frames/frame-image.js';
import type { KeptFrames } from '../frames/kept-frames.js';
import type { Clock } from '../question/parse-question.js';
import type { SourceRegistry } from '../sources/known-sources.js';
import { captionFields, type CaptionFields, type CaptionMetadataInput } from './caption-metadata.js';
import { captionId } from './caption-id.js';
import { MicroBatcher } from './micro-batcher.js';

/** What ingesting a caption needs. */
export interface CaptionIngestDeps {
  textEmbedder: TextEmbedder;
  imageEmbedder: ImageEmbedder;
  captions: VectorStore;
  frames: VectorStore;
  keptFrames: KeptFrames;
  sources: SourceRegistry;
  frameLimits: FrameLimits;
  logger: Logger;
  clock: Clock;
}

/** The outcome of one ingest: the caption's id, whether its frame was kept (or why not) and the extras ignored. */
export interface IngestResult {
  id: string;
  frameKept: boolean;
  frameReason?: string;
  ignored: string[];
}

/** Texts embedded in one model run, at most; records written in one table write, at most. */
const TEXT_BATCH = 32;
const IMAGE_BATCH = 8;
const WRITE_BATCH = 512;

/** Stored metadata of a kept frame's image vector: enough to find its caption and to filter like captions. */
function frameMetadata(id: string, key: string, fields: CaptionFields): Record<string, MetadataValue> {
  const metadata: Record<string, MetadataValue> = {
    kind: 'frame',
    caption_id: id,
    frame_key: key,
    timestamp: fields.timestamp,
  };
  if (fields.camera !== undefined) metadata.camera = fields.camera;
  if (fields.runId !== undefined) metadata.run_id = fields.runId;
  if (fields.frameId !== undefined) metadata.frame_id = fields.frameId;
  return metadata;
}

/**
 * Stores captions: the text embedded with the text embedder into the captions collection and, when `image_data` is
 * a frame, the image kept in the object store and embedded with the image embedder into the frames collection.
 * Concurrent requests share model runs and table writes (MicroBatcher), so ingest keeps up with a pipeline's rate.
 */
export class CaptionIngest {
  private readonly texts: MicroBatcher<string, Float32Array>;
  private readonly images: MicroBatcher<RgbImage, Float32Array>;
  private readonly captionWrites: MicroBatcher<VectorRecord, undefined>;
  private readonly frameWrites: MicroBatcher<VectorRecord, undefined>;

  constructor(private readonly deps: CaptionIngestDeps) {
    this.texts = new MicroBatcher((texts) => deps.textEmbedder.embed(texts), TEXT_BATCH);
    this.images = new MicroBatcher((images) => deps.imageEmbedder.embed(images), IMAGE_BATCH);
    const writer = (store: VectorStore) => async (records: VectorRecord[]) => {
      await store.insert(records);
      return records.map(() => undefined);
    };
    this.captionWrites = new MicroBatcher(writer(deps.captions), WRITE_BATCH);
    this.frameWrites = new MicroBatcher(writer(deps.frames), WRITE_BATCH);
  }

  /** Stores one caption (and its frame when `imageData` is one); resolves once both are written. */
  async ingest(imageData: string, input: CaptionMetadataInput): Promise<IngestResult> {
    const receivedAt = this.deps.clock();
    const fields = captionFields(input, receivedAt);
    const id = captionId(receivedAt);
    const [text, frame] = await Promise.allSettled([
      this.texts.submit(fields.text),
      this.keepFrame(id, imageData, fields),
    ]);
    const kept = frame.status === 'fulfilled' ? frame.value : {};
    try {
      if (text.status === 'rejected') throw text.reason;
      if (frame.status === 'rejected') throw frame.reason;
      const metadata = kept.key ? { ...fields.metadata, frame_key: kept.key } : fields.metadata;
      await this.captionWrites.submit({ id, vector: text.value, metadata });
    } catch (error) {
      if (kept.key) await this.forgetFrame(id, kept.key);
      throw error;
    }
    await this.deps.sources.note(fields.camera, fields.runId).catch((error: unknown) => {
      // The caption is stored; only filtering by its source name waits for the next successful registry write.
      this.deps.logger.warn('source registry not written', { error: (error as Error).message });
    });
    return { id, frameKept: kept.key !== undefined, frameReason: kept.reason, ignored: fields.ignored };
  }

  /** Keeps the frame and writes its image vector; a frame that is not an image is no failure, only not kept. */
  private async keepFrame(
    id: string,
    imageData: string,
    fields: CaptionFields,
  ): Promise<{ key?: string; reason?: string }> {
    const frame = await readFrameImage(imageData, this.deps.frameLimits);
    if (frame.kind === 'not-kept') return { reason: frame.reason };
    const vector = await this.images.submit(frame.rgb);
    const key = await this.deps.keptFrames.keep(id, frame.ext, frame.bytes);
    try {
      await this.frameWrites.submit({ id, vector, metadata: frameMetadata(id, key, fields) });
    } catch (error) {
      await this.deps.keptFrames.remove(key).catch(() => undefined);
      throw error;
    }
    return { key };
  }

  /** Rolls back a kept frame whose caption could not be stored. */
  private async forgetFrame(id: string, key: string): Promise<void> {
    await this.deps.keptFrames.remove(key).catch(() => undefined);
    await this.deps.frames.delete({ equals: { caption_id: id } }).catch(() => undefined);
  }
}
