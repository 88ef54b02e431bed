import { readFile, stat } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { mediaTypeFromName, type MediaKind } from '../../lib/media/index.js';
import type { ObjectStore } from '../../lib/storage/index.js';
import type { MediaCatalogue } from '../media/catalogue.js';
import type { ReferencedMedia } from '../media/referenced-media.js';

/** A media item the frame endpoint reads: where, what kind, and which version of it. */
export interface FrameMedia {
  kind: MediaKind;
  filename: string;
  /** Changes whenever the file does (a re-stored object, a replaced file on the mount): part of every cache key. */
  identity: string;
  /**
   * Where ffmpeg reads it: a local path, or a signed URL valid for `ttlSeconds` that ffmpeg reads with HTTP Range
   * (never downloaded whole). A URL carries a signature: it is never logged.
   */
  location(ttlSeconds: number): Promise<string>;
  /** The whole file (images only: they are small and sharp decodes them from memory). */
  bytes(): Promise<Buffer>;
}

/**
 * The media of `<bucket>/<video_id>`: the stored file, else a referenced file still readable below the ingest root;
 * undefined when neither exists (404) or the file is of no supported kind.
 */
export async function findFrameMedia(
  services: { catalogue: MediaCatalogue; references: ReferencedMedia; objectStore: ObjectStore },
  bucket: string,
  videoId: string,
): Promise<FrameMedia | undefined> {
  const store = services.objectStore;
  const stored = await services.catalogue.find(bucket, videoId);
  if (stored) {
    const kind = mediaTypeFromName(stored.filename)?.kind;
    if (!kind) return undefined;
    return {
      kind,
      filename: stored.filename,
      identity: `stored:${bucket}/${stored.key}:${stored.size}:${stored.lastModified.getTime()}`,
      location: async (ttl) =>
        (await store.localPath(bucket, stored.key)) ?? (await store.signedGetUrl(bucket, stored.key, ttl))!,
      bytes: async () => buffer(await store.get(bucket, stored.key)),
    };
  }
  const live = await services.references.findLive(bucket, videoId);
  if (!live) return undefined;
  const kind = mediaTypeFromName(live.reference.filename)?.kind;
  if (!kind) return undefined;
  // The record does not change when the file on the mount is replaced in place; its size and mtime do.
  const info = await stat(live.file.real);
  return {
    kind,
    filename: live.reference.filename,
    identity: `referenced:${bucket}/${videoId}:${live.file.real}:${info.size}:${info.mtimeMs}:${info.ino}`,
    location: async () => live.file.real,
    bytes: () => readFile(live.file.real),
  };
}
