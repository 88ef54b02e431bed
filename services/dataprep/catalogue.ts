import type { ObjectInfo, ObjectStore } from '../lib/storage/index.js';
import { contentTypeOf } from './media-kinds.js';

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

/** The media layout over the ObjectStore: each video_id is a directory holding exactly one media file. */
export class MediaCatalogue {
  constructor(private readonly store: ObjectStore) {}

  /** Object key of a media file. */
  static keyOf(videoId: string, filename: string): string {
    return `${videoId}/${filename}`;
  }

  /** The media file of `videoId`, or undefined when the directory holds none. */
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

  /** Removes the stored files of one video; returns how many objects went. */
  removeVideo(bucket: string, videoId: string): Promise<number> {
    return this.store.deletePrefix(bucket, `${videoId}/`);
  }

  /** Removes every stored object of the bucket; returns how many went. */
  removeBucket(bucket: string): Promise<number> {
    return this.store.deletePrefix(bucket, '');
  }
}
