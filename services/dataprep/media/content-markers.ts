import { ObjectNotFoundError, StorageUnavailableError, type ObjectStore } from '../../lib/storage/index.js';

/** Who owns a content hash: the media item that claimed it first (while it runs) and then processed it. */
export interface ContentMarker {
  sha256: string;
  bucket_name: string;
  video_id: string;
  filename: string;
  /** When the marker was written: the claim's time while `claimed`. */
  created_at: string;
  /**
   * `claimed` from the moment a run with the duplicate policy takes the hash until it succeeds, `owned` after; markers
   * written before claims existed have none and count as owned.
   */
  state?: 'claimed' | 'owned';
}

/** A video's link to the hash of its content, and when the link was written (the store's clock). */
export interface VideoLink {
  sha256: string;
  linkedAt: Date;
}

/** Settings of the markers: how long an unfinished claim is honoured. */
export interface ContentMarkerOptions {
  /** A claim still `claimed` after this long was left by a run that crashed, and may be taken over. */
  claimTimeoutMs: number;
}

// A marker replaced while it is read can come back cut short from a server that rewrites objects in place (s3rver;
// S3 itself replaces objects atomically): such a read is tried again.
const READ_ATTEMPTS = 3;

async function readJson<T>(store: ObjectStore, bucket: string, key: string): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of await store.get(bucket, key)) chunks.push(chunk as Buffer);
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
    } catch (error) {
      if (error instanceof ObjectNotFoundError) return undefined;
      if (error instanceof StorageUnavailableError) throw error;
      if (attempt < READ_ATTEMPTS) continue;
      // A marker that stays unreadable JSON is damaged: it names no owner.
      if (error instanceof SyntaxError) return undefined;
      throw error;
    }
  }
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const SHA256_HEX = /^[0-9a-f]{64}$/;
const JSON_TYPE = { contentType: 'application/json' };
const hashKey = (sha256: string) => `sha256/${sha256}.json`;
const videoKey = (bucket: string, videoId: string) => `videos/${bucket}/${videoId}.json`;
// One per marker ever taken over: its owner and the time it was written name it, so it is taken over once only.
const takeoverKey = (stale: ContentMarker) =>
  `takeovers/${stale.sha256}/${stale.bucket_name}/${stale.video_id}-${Date.parse(stale.created_at) || 0}.json`;

/** True when both markers name the same video. */
export function sameOwner(a: ContentMarker, b: Pick<ContentMarker, 'bucket_name' | 'video_id'>): boolean {
  return a.bucket_name === b.bucket_name && a.video_id === b.video_id;
}

/**
 * Persistent content markers of the duplicate policy, kept as small JSON objects in a reserved bucket of the
 * ObjectStore (so every replica and worker sees them): `sha256/<hex>.json` names the owning video and
 * `videos/<bucket>/<video_id>.json` points back to the hash, so deleting a video or a bucket removes its markers.
 * Claims are made with the store's atomic create-if-absent, so of racing claimants exactly one wins.
 */
export class ContentMarkers {
  constructor(
    private readonly store: ObjectStore,
    readonly bucket: string,
    private readonly options: ContentMarkerOptions,
  ) {}

  /** The marker of a content hash, if any. */
  find(sha256: string): Promise<ContentMarker | undefined> {
    return readJson<ContentMarker>(this.store, this.bucket, hashKey(sha256));
  }

  /** True for a claim whose run never finished within the claim time-out (crashed): it no longer holds the hash. */
  isStaleClaim(marker: ContentMarker, now = Date.now()): boolean {
    if (marker.state !== 'claimed') return false;
    const claimedAt = Date.parse(marker.created_at);
    return !Number.isFinite(claimedAt) || now - claimedAt > this.options.claimTimeoutMs;
  }

  /** The hash the video's link names and when the link was last written (the store's clock); undefined without one. */
  async linkOf(bucket: string, videoId: string): Promise<VideoLink | undefined> {
    const key = videoKey(bucket, videoId);
    // Dated before it is read: a link rewritten in between pairs the newer hash with the older time, so a link can
    // look older than it is, never newer.
    const info = await this.store.stat(this.bucket, key);
    if (!info) return undefined;
    const link = await readJson<{ sha256?: unknown }>(this.store, this.bucket, key);
    if (typeof link?.sha256 !== 'string' || !SHA256_HEX.test(link.sha256)) return undefined;
    return { sha256: link.sha256, linkedAt: info.lastModified };
  }

  /** Writes the video → hash link, which lets removeVideo find the hash marker of a video. */
  async link(marker: ContentMarker): Promise<void> {
    await this.store.put(
      this.bucket,
      videoKey(marker.bucket_name, marker.video_id),
      json({ sha256: marker.sha256 }),
      JSON_TYPE,
    );
  }

  /** Creates the hash marker as `marker`'s claim when the hash has none; true when this call created it. */
  create(marker: ContentMarker): Promise<boolean> {
    return this.store.putIfAbsent(
      this.bucket,
      hashKey(marker.sha256),
      json({ ...marker, state: 'claimed' }),
      JSON_TYPE,
    );
  }

  /**
   * Takes over the `stale` marker for `marker`: only the first of racing callers does (create-if-absent of a record
   * named after the stale marker) and then replaces the hash marker; the others get that first caller's marker back.
   */
  async takeOver(stale: ContentMarker, marker: ContentMarker): Promise<ContentMarker | undefined> {
    const claim: ContentMarker = { ...marker, state: 'claimed' };
    if (await this.store.putIfAbsent(this.bucket, takeoverKey(stale), json(claim), JSON_TYPE)) {
      await this.store.put(this.bucket, hashKey(marker.sha256), json(claim), JSON_TYPE);
      return undefined;
    }
    return readJson<ContentMarker>(this.store, this.bucket, takeoverKey(stale));
  }

  /** Gives up `owner`'s claim of `sha256` (its run failed), so that the next claimant can win. */
  async release(sha256: string, owner: Pick<ContentMarker, 'bucket_name' | 'video_id'>): Promise<void> {
    const current = await this.find(sha256);
    if (current && sameOwner(current, owner)) await this.store.deletePrefix(this.bucket, hashKey(sha256));
  }

  /**
   * Records `marker` as the owner after a successful run: the hash marker becomes `owned` unless another video holds
   * it (the first owner keeps it when duplicates are allowed); the video → hash link is always written.
   */
  async record(marker: ContentMarker): Promise<void> {
    await this.link(marker);
    const owned: ContentMarker = { ...marker, state: 'owned' };
    const key = hashKey(marker.sha256);
    if (await this.store.putIfAbsent(this.bucket, key, json(owned), JSON_TYPE)) return;
    const existing = await this.find(marker.sha256);
    if (!existing || sameOwner(existing, marker)) await this.store.put(this.bucket, key, json(owned), JSON_TYPE);
  }

  /** Removes the markers of one video (the hash marker only where this video owns it). */
  async removeVideo(bucket: string, videoId: string): Promise<void> {
    const link = await readJson<{ sha256: string }>(this.store, this.bucket, videoKey(bucket, videoId));
    if (link?.sha256 && SHA256_HEX.test(link.sha256)) {
      await this.release(link.sha256, { bucket_name: bucket, video_id: videoId });
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
