import { withDetectedExtension, type MediaType } from '../../lib/media/index.js';
import type { ObjectStore } from '../../lib/storage/index.js';
import { MediaCatalogue, type StoredMedia } from '../media/catalogue.js';
import { safeFilename } from '../media/video-ids.js';

/** Where an ingested image goes: its bucket, its new video's id, its file name and the type its bytes show. */
export interface ImageTarget {
  bucket: string;
  videoId: string;
  filename: string;
  type: MediaType;
}

/** The stored file name of an image: `name` (given, or taken from its URL) made safe, with the extension its bytes show. */
export function imageFilename(type: MediaType, name: string | undefined): string {
  return withDetectedExtension(safeFilename(name, `image.${type.ext}`), type);
}

/** Stores `bytes` as the one file of the target video and describes it as the catalogue lists stored media. */
export async function storeImage(objectStore: ObjectStore, target: ImageTarget, bytes: Buffer): Promise<StoredMedia> {
  const { bucket, videoId, filename, type } = target;
  const key = MediaCatalogue.keyOf(videoId, filename);
  await objectStore.put(bucket, key, bytes, { contentType: type.mime });
  return { bucket, videoId, key, filename, size: bytes.length, lastModified: new Date(), contentType: type.mime };
}
