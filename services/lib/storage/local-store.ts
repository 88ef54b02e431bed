import { randomUUID } from 'node:crypto';
import { createWriteStream, type Stats } from 'node:fs';
import {
  access,
  constants,
  link,
  lstat,
  mkdir,
  open,
  readdir,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  unlink,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertValidBucketName, assertValidKey, assertValidPrefix, checkedListOptions } from './keys.js';
import { assertValidRange, checkedLimit, MeasuringStream } from './measuring-stream.js';
import {
  InvalidKeyError,
  ObjectNotFoundError,
  ObjectTooLargeError,
  StorageUnavailableError,
  type ByteRange,
  type ListOptions,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type PutResult,
} from './object-store.js';

// Partial uploads live in the bucket directory (same filesystem, so the final rename is atomic) but outside the key
// space: keys may not start with this segment and listings skip it.
const TEMP_DIR = '.argus-tmp';

/** ObjectStore on the local filesystem: each bucket is a directory under `root`, each key a file path inside it. */
export class LocalObjectStore implements ObjectStore {
  readonly backend = 'local';
  readonly hasLocalFiles = true;
  private readonly root: string;
  private realRoot?: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  async put(bucket: string, key: string, body: Readable | Buffer, options: PutOptions = {}): Promise<PutResult> {
    const target = this.objectPath(bucket, key);
    const limit = checkedLimit(options.maxBytes);
    if (Buffer.isBuffer(body) && body.length > limit) throw new ObjectTooLargeError(limit);
    const temp = await this.guard(() => this.tempFileFor(bucket, target));
    const meter = new MeasuringStream(limit);
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    // A failing body (a client that went away) is the caller's error, not the storage's: pass it on unchanged.
    let sourceError: unknown;
    source.once('error', (err) => (sourceError = err));
    try {
      await pipeline(source, meter, createWriteStream(temp, { flags: 'wx' }));
      await this.makeParentDir(target);
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      if (err === sourceError) throw err;
      throw mapFsError(err, `cannot store ${bucket}/${key}`, true);
    }
    return { key, size: meter.bytes, sha256: meter.digest() };
  }

  /**
   * Writes a temp file whole, then hard-links it to the key: link(2) fails with EEXIST when the name exists, which
   * makes creation atomic, and the object appears complete or not at all.
   */
  async putIfAbsent(bucket: string, key: string, body: Buffer): Promise<boolean> {
    const target = this.objectPath(bucket, key);
    let temp: string | undefined;
    try {
      temp = await this.tempFileFor(bucket, target);
      await writeFile(temp, body, { flag: 'wx' });
      await this.makeParentDir(target);
      await link(temp, target);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && (await this.fileStats(target))) return false;
      throw mapFsError(err, `cannot store ${bucket}/${key}`, true);
    } finally {
      if (temp) await rm(temp, { force: true });
    }
  }

  async get(bucket: string, key: string, range?: ByteRange): Promise<Readable> {
    const file = this.objectPath(bucket, key);
    if (range) assertValidRange(range);
    const info = await this.fileStats(file);
    if (!info) throw new ObjectNotFoundError(bucket, key);
    if (range && range.start >= info.size) throw new RangeError(`range starts past the end of ${bucket}/${key}`);
    // Opened before the stream is handed out: an object removed after the stat is "not found", not a stream error.
    let handle: FileHandle;
    try {
      handle = await open(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ObjectNotFoundError(bucket, key);
      throw mapFsError(err, `cannot read ${bucket}/${key}`);
    }
    if (!range) return handle.createReadStream();
    return handle.createReadStream({ start: range.start, end: Math.min(range.end, info.size - 1) });
  }

  /** The stored file itself: readers must not write or remove it (a put to the same key replaces it atomically). */
  async localPath(bucket: string, key: string): Promise<string> {
    const file = this.objectPath(bucket, key);
    if (!(await this.fileStats(file))) throw new ObjectNotFoundError(bucket, key);
    return file;
  }

  /** Objects are files here: `localPath` names them, so no URL is handed out (the key is still checked). */
  async signedGetUrl(bucket: string, key: string): Promise<undefined> {
    this.objectPath(bucket, key);
    return undefined;
  }

  async stat(bucket: string, key: string): Promise<ObjectInfo | undefined> {
    const info = await this.fileStats(this.objectPath(bucket, key));
    return info && { key, size: info.size, lastModified: info.mtime };
  }

  async list(bucket: string, prefix = '', options?: ListOptions): Promise<ObjectInfo[]> {
    assertValidPrefix(prefix);
    const page = checkedListOptions(options);
    const bucketDir = this.bucketPath(bucket);
    return this.guard(async () => {
      if (!(await this.isDirectory(bucketDir))) return [];
      await this.assertInsideRoot(bucketDir);
      // Start at the deepest directory the prefix names, so listing one video does not walk the whole bucket.
      const slash = prefix.lastIndexOf('/');
      const startKey = slash >= 0 ? prefix.slice(0, slash) : '';
      const found: ObjectInfo[] = [];
      if (page.limit === Number.POSITIVE_INFINITY && page.startAfter === '') {
        await this.walk(bucketDir, startKey, prefix, found);
        return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      }
      await this.walkInOrder(bucketDir, startKey, prefix, page, found);
      return found;
    });
  }

  async deletePrefix(bucket: string, prefix: string): Promise<number> {
    const objects = await this.list(bucket, prefix);
    const bucketDir = this.bucketPath(bucket);
    return this.guard(async () => {
      const dirs = new Set<string>();
      for (const { key } of objects) {
        const file = this.objectPath(bucket, key);
        await unlink(file).catch(ignoreCode('ENOENT'));
        for (let dir = dirname(file); dir !== bucketDir && dir.startsWith(bucketDir + sep); dir = dirname(dir)) {
          dirs.add(dir);
        }
      }
      // Deepest first, so a parent is only tried once its children are gone.
      const byDepth = [...dirs].sort((a, b) => b.split(sep).length - a.split(sep).length);
      for (const dir of byDepth) await rmdir(dir).catch(ignoreCode('ENOENT', 'ENOTEMPTY', 'EEXIST'));
      return objects.length;
    });
  }

  async bucketExists(bucket: string): Promise<boolean> {
    return this.guard(() => this.isDirectory(this.bucketPath(bucket)));
  }

  async ping(): Promise<void> {
    await this.guard(async () => {
      await this.ensureRoot();
      await access(this.root, constants.R_OK | constants.W_OK);
    });
  }

  /** Nothing to release: every call opens and closes its own files. */
  async close(): Promise<void> {}

  private bucketPath(bucket: string): string {
    assertValidBucketName(bucket);
    return join(this.root, bucket);
  }

  private objectPath(bucket: string, key: string): string {
    assertValidKey(key);
    if (key === TEMP_DIR || key.startsWith(`${TEMP_DIR}/`)) throw new InvalidKeyError(`reserved key: ${key}`);
    const file = join(this.bucketPath(bucket), ...key.split('/'));
    if (!isInside(this.root, file)) throw new InvalidKeyError(`key escapes the storage root: ${key}`);
    return file;
  }

  private async ensureRoot(): Promise<string> {
    if (!this.realRoot) {
      await mkdir(this.root, { recursive: true });
      this.realRoot = await realpath(this.root);
    }
    return this.realRoot;
  }

  /** Resolves symlinks on the deepest existing ancestor of `path` and refuses anything that lands outside the root. */
  private async assertInsideRoot(path: string): Promise<void> {
    const realRoot = await this.ensureRoot();
    let probe = path;
    for (;;) {
      try {
        const real = await realpath(probe);
        if (!isInside(realRoot, real)) throw new InvalidKeyError('path escapes the storage root through a link');
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || probe === this.root) throw err;
        probe = dirname(probe);
      }
    }
  }

  /** Stats of a regular file inside the root, or undefined when there is none at that path. */
  private async fileStats(file: string): Promise<Stats | undefined> {
    return this.guard(async () => {
      let info: Stats;
      try {
        info = await stat(file);
      } catch (err) {
        if (['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return undefined;
        throw err;
      }
      await this.assertInsideRoot(file);
      return info.isFile() ? info : undefined;
    });
  }

  private async isDirectory(path: string): Promise<boolean> {
    try {
      return (await stat(path)).isDirectory();
    } catch (err) {
      if (['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return false;
      throw err;
    }
  }

  private async walk(bucketDir: string, dirKey: string, prefix: string, found: ObjectInfo[]): Promise<void> {
    const dir = dirKey ? join(bucketDir, ...dirKey.split('/')) : bucketDir;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return;
      throw err;
    }
    await Promise.all(
      entries.map(async (entry) => {
        if (!dirKey && entry.name === TEMP_DIR) return;
        const key = dirKey ? `${dirKey}/${entry.name}` : entry.name;
        // Links are never followed: they are not objects this store wrote, and may point anywhere.
        if (entry.isDirectory()) {
          const asDir = `${key}/`;
          if (asDir.startsWith(prefix) || prefix.startsWith(asDir)) await this.walk(bucketDir, key, prefix, found);
        } else if (entry.isFile() && key.startsWith(prefix)) {
          const info = await lstat(join(dir, entry.name)).catch(ignoreCode('ENOENT'));
          if (info) found.push({ key, size: info.size, lastModified: info.mtime });
        }
      }),
    );
  }

  /**
   * A page of `walk`: entries visited in key order (a directory sorts as its name plus `/`), subtrees whose keys all
   * sort before `startAfter` skipped unread, and the walk stops at `limit` objects.
   */
  private async walkInOrder(
    bucketDir: string,
    dirKey: string,
    prefix: string,
    page: { limit: number; startAfter: string },
    found: ObjectInfo[],
  ): Promise<void> {
    const dir = dirKey ? join(bucketDir, ...dirKey.split('/')) : bucketDir;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return;
      throw err;
    }
    const ordered = entries
      .filter((entry) => (entry.isDirectory() || entry.isFile()) && !(!dirKey && entry.name === TEMP_DIR))
      .map((entry) => {
        const key = dirKey ? `${dirKey}/${entry.name}` : entry.name;
        return { entry, key, order: entry.isDirectory() ? `${key}/` : key };
      })
      .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
    for (const { entry, key, order } of ordered) {
      if (found.length >= page.limit) return;
      if (entry.isDirectory()) {
        if (!(order.startsWith(prefix) || prefix.startsWith(order))) continue;
        if (order < page.startAfter && !page.startAfter.startsWith(order)) continue;
        await this.walkInOrder(bucketDir, key, prefix, page, found);
      } else if (key.startsWith(prefix) && key > page.startAfter) {
        const info = await lstat(join(dir, entry.name)).catch(ignoreCode('ENOENT'));
        if (info) found.push({ key, size: info.size, lastModified: info.mtime });
      }
    }
  }

  /** A fresh temp file name in the bucket's temp dir (created, inside the root) for an object bound for `target`. */
  private async tempFileFor(bucket: string, target: string): Promise<string> {
    await this.ensureRoot();
    await this.assertInsideRoot(target);
    const tempDir = join(this.bucketPath(bucket), TEMP_DIR);
    await mkdir(tempDir, { recursive: true });
    await this.assertInsideRoot(tempDir);
    return join(tempDir, `${randomUUID()}.part`);
  }

  /** Creates the directory `target` goes in, refusing one that resolves outside the root. */
  private async makeParentDir(target: string): Promise<void> {
    await mkdir(dirname(target), { recursive: true });
    await this.assertInsideRoot(dirname(target));
  }

  private async guard<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (err) {
      throw mapFsError(err, 'local storage failed');
    }
  }
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

function ignoreCode(...codes: string[]): (err: NodeJS.ErrnoException) => undefined {
  return (err) => {
    if (!codes.includes(err.code ?? '')) throw err;
    return undefined;
  };
}

/**
 * Our own errors pass through; while storing, path clashes (a key where a "directory" is, or below a file) are the
 * caller's key problem; any other fs failure is the backend's.
 */
function mapFsError(err: unknown, message: string, clashIsKeyError = false): Error {
  if (
    err instanceof InvalidKeyError ||
    err instanceof ObjectTooLargeError ||
    err instanceof ObjectNotFoundError ||
    err instanceof StorageUnavailableError ||
    err instanceof RangeError
  ) {
    return err;
  }
  const code = (err as NodeJS.ErrnoException)?.code;
  if (clashIsKeyError && (code === 'EISDIR' || code === 'ENOTDIR' || code === 'EEXIST' || code === 'ENOTEMPTY')) {
    return new InvalidKeyError(`${message}: the key clashes with an existing key or key prefix`);
  }
  return new StorageUnavailableError(`${message}: ${code ?? (err as Error)?.message ?? 'unknown error'}`, {
    cause: err,
  });
}
