import { ObjectNotFoundError, type ObjectStore } from '../../lib/storage/index.js';
import type { IngestRoot, RootFile } from '../ingest-root/ingest-root.js';

/** The record of one media file ingested by reference (directory ingest with store_copy=false). */
export interface MediaReference {
  bucket_name: string;
  video_id: string;
  filename: string;
  /** Path relative to the ingest data root, as the directory walk found it. */
  path: string;
  sha256: string;
  created_at: string;
}

/** A reference whose file is still readable below the root. */
export interface LiveReference {
  reference: MediaReference;
  file: RootFile;
}

const PREFIX = 'references/';
const keyOf = (bucket: string, videoId: string) => `${PREFIX}${bucket}/${videoId}.json`;

async function readJson(store: ObjectStore, bucket: string, key: string): Promise<MediaReference | undefined> {
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of await store.get(bucket, key)) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as MediaReference;
  } catch (error) {
    if (error instanceof ObjectNotFoundError || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/**
 * Media referenced in place on the ingest mount: no copy in storage, only a small record per video
 * (`references/<bucket>/<video_id>.json` in the reserved marker bucket, so every replica and worker sees it). The
 * recorded path is re-validated against the ingest root (real path) on every use, so a file moved, deleted or replaced
 * by a symlink leading out counts as gone. Nothing here ever writes or deletes a file on the mount.
 */
export class ReferencedMedia {
  constructor(
    private readonly store: ObjectStore,
    private readonly recordBucket: string,
    private readonly root: IngestRoot | undefined,
  ) {}

  /** Records a referenced video (after it was embedded). */
  async record(reference: MediaReference): Promise<void> {
    await this.store.put(
      this.recordBucket,
      keyOf(reference.bucket_name, reference.video_id),
      Buffer.from(JSON.stringify(reference)),
      { contentType: 'application/json' },
    );
  }

  /** The record of a video, readable or not. */
  find(bucket: string, videoId: string): Promise<MediaReference | undefined> {
    return readJson(this.store, this.recordBucket, keyOf(bucket, videoId));
  }

  /** The record of a video and its file, when the file is still readable inside the ingest root. */
  async findLive(bucket: string, videoId: string): Promise<LiveReference | undefined> {
    const reference = await this.find(bucket, videoId);
    return reference && this.live(reference);
  }

  /** Every readable referenced video of the bucket, oldest first; unreadable ones are left out. */
  async list(bucket: string): Promise<LiveReference[]> {
    const found: LiveReference[] = [];
    for (const info of await this.store.list(this.recordBucket, `${PREFIX}${bucket}/`)) {
      const reference = await readJson(this.store, this.recordBucket, info.key);
      const live = reference && (await this.live(reference));
      if (live) found.push(live);
    }
    return found.sort((a, b) => a.reference.created_at.localeCompare(b.reference.created_at));
  }

  /** The host-visible path of a reference (`source_path`). */
  hostPath(reference: MediaReference): string {
    return this.root ? this.root.hostPath(reference.path) : reference.path;
  }

  /** Forgets one referenced video (its file stays where it is); false when there was no record. */
  async remove(bucket: string, videoId: string): Promise<boolean> {
    return (await this.store.deletePrefix(this.recordBucket, keyOf(bucket, videoId))) > 0;
  }

  /** Forgets every referenced video of a bucket (their files stay); returns how many records went. */
  removeBucket(bucket: string): Promise<number> {
    return this.store.deletePrefix(this.recordBucket, `${PREFIX}${bucket}/`);
  }

  private async live(reference: MediaReference): Promise<LiveReference | undefined> {
    if (!this.root) return undefined;
    const file = await this.root.resolveFile(reference.path);
    return file && { reference, file };
  }
}
