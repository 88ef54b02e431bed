import type { ObjectInfo, ObjectStore } from '../../lib/storage/index.js';
import { contentTypeOf } from './media-kinds.js';
import { VIDEO_ID_PATTERN } from './video-ids.js';

/** One stored media item: the single file of `<bucket>/<video_id>/`. */
export interface StoredMedia {
  bucket: string;
  videoId: string;
  key: string;
  filename: string;
  size: number;
  lastModified: Date;
  contentType: string;
}

function toMedia(bucket: string, info: ObjectInfo): StoredMedia | undefined {
  const parts = info.key.split('/');
  if (parts.length !== 2) return undefined;
  const [videoId, filename] = parts;
  return {
    bucket,
    videoId,
    key: info.key,
    filename,
    size: info.size,
    lastModified: info.lastModified,
    contentType: contentTypeOf(filename),
  };
}

/** One page of a bucket's media, in video_id order, and the token of the next page when there is one. */
export interface MediaPage {
  media: StoredMedia[];
  nextPageToken?: string;
}

/** Raised for a page token this service did not hand out. */
export class InvalidPageTokenError extends Error {
  constructor() {
    super('Invalid page_token');
    this.name = 'InvalidPageTokenError';
  }
}

/** The token of the page after `videoId`: opaque to clients (base64url of the id). */
function pageTokenAfter(videoId: string): string {
  return Buffer.from(videoId, 'utf8').toString('base64url');
}

/** The video_id a page token continues after; throws InvalidPageTokenError for anything else. */
function videoIdOfToken(token: string): string {
  const videoId = Buffer.from(token, 'base64url').toString('utf8');
  if (!VIDEO_ID_PATTERN.test(videoId) || pageTokenAfter(videoId) !== token) throw new InvalidPageTokenError();
  return videoId;
}

/**
 * Where a listing resumes after `videoId`'s directory: '0' is the character after '/', so `<id>0` sorts after every
 * `<id>/…` key and before every key that follows them (but `<id>0` itself, which is no media key).
 */
const afterDirectory = (videoId: string): string => `${videoId}0`;

/** The media layout over the ObjectStore: each video_id is a directory holding exactly one media file. */
export class MediaCatalogue {
  constructor(private readonly store: ObjectStore) {}

  /** Object key of a media file. */
  static keyOf(videoId: string, filename: string): string {
    return `${videoId}/${filename}`;
  }

  /** The media file of `videoId`, or undefined when the directory holds none: one listing of that directory only. */
  async find(bucket: string, videoId: string): Promise<StoredMedia | undefined> {
    const objects = await this.store.list(bucket, `${videoId}/`);
    for (const info of objects) {
      const media = toMedia(bucket, info);
      if (media && media.videoId === videoId) return media;
    }
    return undefined;
  }

  /** Every media item of the bucket, oldest first (one per video_id directory). */
  async list(bucket: string): Promise<StoredMedia[]> {
    const byVideo = new Map<string, StoredMedia>();
    for (const info of await this.store.list(bucket, '')) {
      const media = toMedia(bucket, info);
      if (media && !byVideo.has(media.videoId)) byVideo.set(media.videoId, media);
    }
    return [...byVideo.values()].sort((a, b) => a.lastModified.getTime() - b.lastModified.getTime());
  }

  /**
   * Up to `limit` media items in video_id (key) order, after the one `pageToken` names, reading storage a page at a
   * time instead of listing the whole bucket. Keys that are not media (deeper paths, top-level files) are skipped.
   */
  async listPage(bucket: string, limit: number, pageToken?: string): Promise<MediaPage> {
    const media: StoredMedia[] = [];
    let startAfter = pageToken === undefined ? '' : afterDirectory(videoIdOfToken(pageToken));
    // One more than asked: whether it exists says if there is a next page. Each round moves startAfter forward.
    for (;;) {
      const batch = limit + 1 - media.length;
      const objects = await this.store.list(bucket, '', { limit: batch, startAfter });
      for (const info of objects) {
        const item = toMedia(bucket, info);
        if (item && item.videoId !== media.at(-1)?.videoId) media.push(item);
      }
      if (media.length > limit || objects.length < batch) break;
      const last = objects[objects.length - 1].key;
      const lastVideo = media.at(-1)?.videoId;
      startAfter = lastVideo !== undefined && last.startsWith(`${lastVideo}/`) ? afterDirectory(lastVideo) : last;
    }
    const page = media.slice(0, limit);
    return media.length > limit
      ? { media: page, nextPageToken: pageTokenAfter(page[page.length - 1].videoId) }
      : { media: page };
  }

  /** Removes the stored files of one video; returns how many objects went. */
  removeVideo(bucket: string, videoId: string): Promise<number> {
    return this.store.deletePrefix(bucket, `${videoId}/`);
  }

  /** Removes every stored object of the bucket; returns how many went. */
  removeBucket(bucket: string): Promise<number> {
    return this.store.deletePrefix(bucket, '');
  }
}
