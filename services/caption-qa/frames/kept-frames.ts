import type { Readable } from 'node:stream';
import type { ObjectStore } from '../../lib/storage/index.js';
import { FRAME_CONTENT_TYPES } from './frame-image.js';

/** Key prefix of kept frames in the service's bucket. */
const PREFIX = 'frames/';
/** Objects listed per page during a sweep. */
const PAGE = 1000;

/** A kept frame, streamed back. */
export interface KeptFrame {
  body: Readable;
  contentType: string;
  size: number;
}

/** How many frames to keep and for how long (0: no limit). */
export interface KeepLimits {
  maxCount: number;
  maxAgeMs: number;
}

/** Frame images kept in the object store under `frames/<caption id>.<ext>`, bounded in number and age. */
export class KeptFrames {
  constructor(
    private readonly store: ObjectStore,
    private readonly bucket: string,
  ) {}

  /** Stores a frame for the caption `id`; returns its key. */
  async keep(id: string, ext: string, bytes: Buffer): Promise<string> {
    const key = `${PREFIX}${id}.${ext}`;
    await this.store.put(this.bucket, key, bytes, { contentType: FRAME_CONTENT_TYPES[ext] });
    return key;
  }

  /** The frame of caption `id`, or undefined when none is kept (never kept, or gone with retention). */
  async open(id: string): Promise<KeptFrame | undefined> {
    const [info] = await this.store.list(this.bucket, `${PREFIX}${id}.`, { limit: 1 });
    if (!info) return undefined;
    const ext = info.key.slice(info.key.lastIndexOf('.') + 1);
    return {
      body: await this.store.get(this.bucket, info.key),
      contentType: FRAME_CONTENT_TYPES[ext] ?? 'application/octet-stream',
      size: info.size,
    };
  }

  /** True while the frame under `key` is kept. */
  async has(key: string): Promise<boolean> {
    return (await this.store.stat(this.bucket, key)) !== undefined;
  }

  /** Removes one frame (rolling back a failed ingest). */
  async remove(key: string): Promise<void> {
    await this.store.deletePrefix(this.bucket, key);
  }

  /**
   * Applies retention: deletes the frames older than `maxAgeMs` and, of the rest, all but the newest `maxCount`.
   * Returns the deleted keys, so their vectors can go with them.
   */
  async sweep(limits: KeepLimits, now: number): Promise<string[]> {
    if (limits.maxCount === 0 && limits.maxAgeMs === 0) return [];
    const all = [];
    for (let after: string | undefined; ;) {
      const page = await this.store.list(this.bucket, PREFIX, { limit: PAGE, startAfter: after });
      all.push(...page);
      if (page.length < PAGE) break;
      after = page[page.length - 1].key;
    }
    // Newest first; among equal times the key decides, so a sweep is deterministic.
    all.sort((a, b) => b.lastModified.getTime() - a.lastModified.getTime() || b.key.localeCompare(a.key));
    const doomed = all.filter(
      (info, i) =>
        (limits.maxCount > 0 && i >= limits.maxCount) ||
        (limits.maxAgeMs > 0 && now - info.lastModified.getTime() > limits.maxAgeMs),
    );
    for (const info of doomed) await this.store.deletePrefix(this.bucket, info.key);
    return doomed.map((info) => info.key);
  }
}
