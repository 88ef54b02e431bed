import { ObjectNotFoundError, type ObjectStore } from '../lib/storage/index.js';

/** Who owns a content hash: the first successfully processed media item with these bytes. */
export interface ContentMarker {
  sha256: string;
  bucket_name: string;
  video_id: string;
  filename: string;
  created_at: string;
}

async function readJson<T>(store: ObjectStore, bucket: string, key: string): Promise<T | undefined> {
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of await store.get(bucket, key)) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
  } catch (error) {
    if (error instanceof ObjectNotFoundError) return undefined;
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}

const hashKey = (sha256: string) => `sha256/${sha256}.json`;
const videoKey = (bucket: string, videoId: string) => `videos/${bucket}/${videoId}.json`;

/**
 * Persistent content markers of the duplicate policy, kept as small JSON objects in a reserved bucket of the
 * ObjectStore (so every replica and worker sees them): `sha256/<hex>.json` names the owning video and
 * `videos/<bucket>/<video_id>.json` points back to the hash, so deleting a video or a bucket removes its markers.
 */
export class ContentMarkers {
  constructor(
    private readonly store: ObjectStore,
    readonly bucket: string,
  ) {}

  /** The marker of a content hash, if any. */
  find(sha256: string): Promise<ContentMarker | undefined> {
    return readJson<ContentMarker>(this.store, this.bucket, hashKey(sha256));
  }

  /** Records `marker` unless another video already owns the hash; always records the video → hash link. */
  async record(marker: ContentMarker): Promise<void> {
    const existing = await this.find(marker.sha256);
    const ownedByOther =
      existing && (existing.bucket_name !== marker.bucket_name || existing.video_id !== marker.video_id);
    if (!ownedByOther) {
      await this.store.put(this.bucket, hashKey(marker.sha256), Buffer.from(JSON.stringify(marker)), {
        contentType: 'application/json',
      });
    }
    await this.store.put(
      this.bucket,
      videoKey(marker.bucket_name, marker.video_id),
      Buffer.from(JSON.stringify({ sha256: marker.sha256 })),
      { contentType: 'application/json' },
    );
  }

  /** Removes the markers of one video (the hash marker only where this video owns it). */
  async removeVideo(bucket: string, videoId: string): Promise<void> {
    const link = await readJson<{ sha256: string }>(this.store, this.bucket, videoKey(bucket, videoId));
    if (link?.sha256 && /^[0-9a-f]{64}$/.test(link.sha256)) {
      const owner = await this.find(link.sha256);
      if (owner && owner.bucket_name === bucket && owner.video_id === videoId) {
        await this.store.deletePrefix(this.bucket, hashKey(link.sha256));
      }
    }
    await this.store.deletePrefix(this.bucket, videoKey(bucket, videoId));
  }

  /** Removes the markers of every video of a bucket. */
  async removeBucket(bucket: string): Promise<void> {
    const prefix = `videos/${bucket}/`;
    for (const info of await this.store.list(this.bucket, prefix)) {
      const videoId = info.key.slice(prefix.length).replace(/\.json$/, '');
      if (videoId && !videoId.includes('/')) await this.removeVideo(bucket, videoId);
    }
  }
}
