import { createReadStream } from 'node:fs';
import path from 'node:path';
import { detectMediaType, mediaTypeFromName, type MediaKind } from '../../lib/media/index.js';
import type { IngestItem, IngestJob } from '../../../operator/api/index.js';
import { MediaCatalogue, type StoredMedia } from '../media/catalogue.js';
import { liveContentOwner } from '../media/content-owners.js';
import { sha256OfFile } from '../ingest-root/file-hash.js';
import { checkUserMetadata, mergeMetadata, readSidecar } from '../ingest-root/user-metadata.js';
import { DuplicateContentError, InvalidInputError, NotFoundError } from '../errors.js';
import { loadImageSource } from '../ingest/image-source.js';
import type { ProcessingInput } from '../ingest/processing.js';
import { imageFilename, storeImage } from '../ingest/stored-image.js';
import type { DataprepServices } from '../runtime/services.js';
import type { TempMedia } from '../media/temp-media.js';
import { safeFilename } from '../media/video-ids.js';

/** An item that is deliberately not processed (its content is already embedded); reported as `skipped`. */
export class ItemSkipped extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ItemSkipped';
  }
}

/** One item of a job, as the worker runs it. */
export interface ItemRun {
  job: IngestJob;
  index: number;
  item: IngestItem;
  signal: AbortSignal;
  /** No attempt has run this item before, so its video has no embeddings to replace (processing skips that step). */
  noEarlierRuns: boolean;
}

/** What an item's source provides before processing: the media, how to treat it, and how to undo a failed item. */
export interface PreparedItem {
  media: StoredMedia;
  kind: MediaKind;
  local?: TempMedia;
  enforceDuplicatePolicy: boolean;
  tags?: string[];
  metadata?: ProcessingInput['metadata'];
  sourcePath?: string;
  /** Runs after a successful embedding (the reference record of referenced media). */
  afterSuccess?: () => Promise<unknown>;
  /** Removes what this item created when it fails (stored copies, markers, records); never run on an abort. */
  undo?: () => Promise<unknown>;
}

const noRemove = async () => undefined;

function kindOf(filename: string): MediaKind {
  const type = mediaTypeFromName(filename);
  if (!type) throw new InvalidInputError(`Stored file ${filename} is not a supported media type`);
  return type.kind;
}

/** Removes a video the job stored itself, with its markers. */
function removeStoredVideo(services: DataprepServices, bucket: string, videoId: string) {
  return async () => {
    await services.catalogue.removeVideo(bucket, videoId);
    await services.markers.removeVideo(bucket, videoId);
  };
}

async function storedItem(services: DataprepServices, run: ItemRun, owned: boolean): Promise<PreparedItem> {
  const { bucket } = run.job.spec;
  const videoId = run.item.videoId!;
  const media = await services.catalogue.find(bucket, videoId);
  if (!media) throw new NotFoundError(`No video found in directory ${videoId} of bucket ${bucket}`);
  return {
    media,
    kind: kindOf(media.filename),
    enforceDuplicatePolicy: true,
    undo: owned ? removeStoredVideo(services, bucket, videoId) : undefined,
  };
}

/** A URL image: downloaded now (a failure fails only this item), checked, then stored like a base64 one. */
async function downloadedImage(services: DataprepServices, run: ItemRun): Promise<PreparedItem> {
  const { bucket } = run.job.spec;
  const videoId = run.item.videoId!;
  const { bytes, nameHint } = await loadImageSource(
    { type: 'image_url', image_url: run.item.url },
    services.imageSources,
  );
  const type = await detectMediaType(bytes);
  if (!type || type.kind !== 'image') throw new InvalidInputError('Unsupported or undecodable image at image_url');
  // The identifier is the request's file name when one was given, else derived from the URL.
  const given = run.item.identifier === run.item.url ? undefined : run.item.identifier;
  const filename = imageFilename(type, given ?? nameHint);
  const undo = removeStoredVideo(services, bucket, videoId);
  // A run interrupted earlier may have stored the image already: one file per directory.
  await services.catalogue.removeVideo(bucket, videoId);
  const media = await storeImage(services.objectStore, { bucket, videoId, filename, type }, bytes);
  // Read back from storage by processing, which hashes it for the duplicate policy on the way.
  return { media, kind: 'image', enforceDuplicatePolicy: true, undo };
}

/**
 * A file below the ingest root: its path re-validated (real path inside the root), its sidecar re-read, its content
 * checked against ingested media, then copied into storage (store_copy) or referenced in place.
 */
async function directoryFile(services: DataprepServices, run: ItemRun): Promise<PreparedItem> {
  const { spec } = run.job;
  const videoId = run.item.videoId!;
  const root = services.ingestRoot;
  if (!root) throw new InvalidInputError('Directory ingest is not enabled: MM_DATAPREP_INGEST_DATA_ROOT is not set');
  const file = await root.resolveFile(run.item.path ?? '');
  if (!file) throw new NotFoundError(`${run.item.path} is no longer a readable file below the ingest data root`);
  const type = mediaTypeFromName(file.relative);
  if (!type) throw new InvalidInputError(`${file.relative} is not a supported media type`);
  const sidecar = await readSidecar(root, file.relative);
  if (sidecar.reserved.length) {
    throw new InvalidInputError(`The sidecar uses reserved metadata keys: ${sidecar.reserved.join(', ')}`);
  }
  for (const warning of sidecar.warnings)
    services.logger.warn('directory ingest', { job: run.job.metadata.name, warning });
  // Checked again: a job may also be written by hand (kubectl), not only by the endpoint that checked it.
  const requested = checkUserMetadata(spec.metadata ?? {}, 'metadata');
  if (requested.reserved.length) {
    throw new InvalidInputError(`The job's metadata uses reserved keys: ${requested.reserved.join(', ')}`);
  }
  const { metadata, tags } = mergeMetadata({ metadata: requested.metadata, tags: spec.tags }, sidecar);
  const sha256 = await sha256OfFile(file.real);
  if (!services.config.allowDuplicateUploads) {
    const owner = await liveContentOwner(services, sha256);
    if (owner && !(owner.bucket_name === spec.bucket && owner.video_id === videoId)) {
      const duplicate = new DuplicateContentError(owner.bucket_name, owner.video_id);
      if (spec.storeCopy) throw duplicate;
      throw new ItemSkipped(`Already embedded: ${duplicate.message}`);
    }
  }
  const filename = safeFilename(path.posix.basename(file.relative), `media.${type.ext}`);
  const local: TempMedia = { path: file.real, sha256, remove: noRemove };
  const sourcePath = root.hostPath(file.relative);
  const common = { kind: type.kind, local, enforceDuplicatePolicy: false, tags, metadata, sourcePath };
  const mediaAt = (key: string): StoredMedia => ({
    bucket: spec.bucket,
    videoId,
    key,
    filename,
    size: file.size,
    lastModified: new Date(),
    contentType: type.mime,
  });
  if (spec.storeCopy) {
    const key = MediaCatalogue.keyOf(videoId, filename);
    await services.catalogue.removeVideo(spec.bucket, videoId);
    const undo = removeStoredVideo(services, spec.bucket, videoId);
    try {
      await services.objectStore.put(spec.bucket, key, createReadStream(file.real), { contentType: type.mime });
    } catch (error) {
      await undo().catch(() => undefined);
      throw error;
    }
    return { ...common, media: mediaAt(key), undo };
  }
  return {
    ...common,
    media: mediaAt(file.relative),
    afterSuccess: () =>
      services.references.record({
        bucket_name: spec.bucket,
        video_id: videoId,
        filename,
        path: file.relative,
        sha256,
        created_at: new Date().toISOString(),
      }),
    undo: async () => {
      // Only a failed record write comes after embedding: the embeddings go too, so nothing points at no media.
      await services.vectorStore.delete({ equals: { bucket_name: spec.bucket, video_id: videoId } });
      await services.descriptionStore.delete({ equals: { bucket_name: spec.bucket, video_id: videoId } });
      await services.references.remove(spec.bucket, videoId);
      await services.markers.removeVideo(spec.bucket, videoId);
    },
  };
}

/** What item `run` needs before processing, by its job's source; throws the item's failure (it then fails alone). */
export function prepareItem(services: DataprepServices, run: ItemRun): Promise<PreparedItem> {
  // Refused when the job was submitted: it fails alone, with the service's reason, and nothing runs for it.
  if (run.item.refused !== undefined) throw new InvalidInputError(run.item.refused);
  switch (run.job.spec.source) {
    case 'batch_existing':
      return storedItem(services, run, false);
    case 'upload_batch':
      return storedItem(services, run, true);
    case 'image_batch':
      return run.item.url === undefined ? storedItem(services, run, true) : downloadedImage(services, run);
    case 'directory':
      return directoryFile(services, run);
  }
}
