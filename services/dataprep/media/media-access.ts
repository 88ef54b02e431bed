import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { ByteRange, ObjectStore } from '../../lib/storage/index.js';
import type { StoredMedia } from './catalogue.js';
import { contentTypeOf } from './media-kinds.js';
import {
  contentHashValidators,
  referencedFileValidators,
  storedObjectValidators,
  type MediaValidators,
} from './media-validators.js';
import type { ContentMarkers } from './content-markers.js';
import type { ReferencedMedia } from './referenced-media.js';

/** One entry of GET /media (contract: media listing entry). */
export interface MediaListingEntry {
  video_id: string;
  video_name: string;
  video_path: string;
  creation_ts: string;
  stored: boolean;
  source_path?: string;
}

/** The listing entries of the bucket's referenced media whose files are still readable (oldest first). */
export async function referencedListing(
  services: { references: ReferencedMedia },
  bucket: string,
): Promise<MediaListingEntry[]> {
  return (await services.references.list(bucket)).map(({ reference }) => {
    const hostPath = services.references.hostPath(reference);
    return {
      video_id: reference.video_id,
      video_name: reference.filename,
      video_path: hostPath,
      creation_ts: reference.created_at,
      stored: false,
      source_path: hostPath,
    };
  });
}

/**
 * The listing with the bucket's readable referenced media added to `stored`: merged oldest first into a full listing;
 * after the stored items of the last page of a paged one (`limit`), none on the pages before.
 */
export async function withReferencedMedia(
  services: { references: ReferencedMedia },
  bucket: string,
  stored: MediaListingEntry[],
  page: { paged: boolean; morePages: boolean },
): Promise<MediaListingEntry[]> {
  if (page.morePages) return stored;
  const referenced = await referencedListing(services, bucket);
  if (page.paged) return [...stored, ...referenced];
  return [...stored, ...referenced].sort((a, b) => a.creation_ts.localeCompare(b.creation_ts));
}

/** Media GET /media/download can stream: its size, name, type and validators, and how to read (a range of) it. */
export interface DownloadableMedia {
  filename: string;
  size: number;
  contentType: string;
  validators: MediaValidators;
  open(range?: ByteRange): Promise<Readable>;
}

const wholeSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * A stored media item as something to download (read from the object store, ranges as ranges). Its ETag is its
 * SHA-256 when the video's hash link was written no earlier than the object (processing links the hash of what it
 * read, after the object was stored); compared to the second, the precision S3 reports. An object written after its
 * link (replaced since) or never processed gets weak validators of its own instead.
 */
export async function storedDownload(
  services: { markers: ContentMarkers; objectStore: ObjectStore },
  media: StoredMedia,
): Promise<DownloadableMedia> {
  const link = await services.markers.linkOf(media.bucket, media.videoId);
  const hashed = link && wholeSeconds(link.linkedAt) >= wholeSeconds(media.lastModified);
  return {
    filename: media.filename,
    size: media.size,
    contentType: media.contentType,
    validators: hashed
      ? contentHashValidators(link.sha256, media.lastModified)
      : storedObjectValidators(media.size, media.lastModified),
    open: (range) => services.objectStore.get(media.bucket, media.key, range),
  };
}

/**
 * A referenced video's file on the ingest mount, when its recorded path still resolves (real path) to a readable file
 * inside the ingest root — checked on every request; undefined otherwise (404). Ranges are read at their offset. The
 * hash recorded at ingest is not used: the file may have changed since, and hashing it per request costs a full read.
 */
export async function referencedDownload(
  services: { references: ReferencedMedia },
  bucket: string,
  videoId: string,
): Promise<DownloadableMedia | undefined> {
  const live = await services.references.findLive(bucket, videoId);
  if (!live) return undefined;
  const stats = await stat(live.file.real, { bigint: true }).catch(() => undefined);
  if (!stats?.isFile()) return undefined;
  return {
    filename: live.reference.filename,
    size: Number(stats.size),
    contentType: contentTypeOf(live.reference.filename),
    validators: referencedFileValidators(stats),
    open: async (range) => createReadStream(live.file.real, range && { start: range.start, end: range.end }),
  };
}
