import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import type { ObjectStore } from '../../lib/storage/index.js';

/**
 * A local file of media for ffmpeg and the decoders (they need a seekable file): a temp copy, or the store's own file
 * where the store keeps files (read-only use; `remove` then leaves it alone). Call `remove` when done.
 */
export interface TempMedia {
  path: string;
  sha256?: string;
  remove(): Promise<void>;
}

/** The store's own file of `bucket/key`, for reading only: removing the TempMedia leaves it in place. */
async function storedFile(store: ObjectStore, bucket: string, key: string): Promise<TempMedia | undefined> {
  const file = await store.localPath(bucket, key);
  return file === undefined ? undefined : { path: file, remove: async () => undefined };
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A fresh path under `dir` keeping `filename`'s extension (ffmpeg and sharp look at it). */
export async function tempPathFor(dir: string, filename: string): Promise<TempMedia> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${randomUUID()}${path.extname(filename).toLowerCase()}`);
  return { path: file, remove: () => rm(file, { force: true }) };
}

/** Writes `bytes` to a temp file. */
export async function writeTempMedia(dir: string, filename: string, bytes: Buffer): Promise<TempMedia> {
  const temp = await tempPathFor(dir, filename);
  await writeFile(temp.path, bytes);
  return temp;
}

/** Streams `stream` to a temp file, hashing it on the way; the file is removed again when the copy fails. */
export async function streamToTempMedia(dir: string, filename: string, stream: Readable): Promise<TempMedia> {
  const temp = await tempPathFor(dir, filename);
  const hash = createHash('sha256');
  const hasher = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  try {
    await pipeline(stream, hasher, createWriteStream(temp.path, { flags: 'wx' }));
  } catch (error) {
    await temp.remove();
    throw error;
  }
  return { ...temp, sha256: hash.digest('hex') };
}

/**
 * A stored object as a local file, with its SHA-256: the store's own file where it keeps files (read, never copied),
 * else a download (streamed) to a temp file.
 */
export async function downloadToTempMedia(
  store: ObjectStore,
  bucket: string,
  key: string,
  dir: string,
): Promise<TempMedia> {
  const stored = await storedFile(store, bucket, key);
  if (stored) return { ...stored, sha256: await sha256Of(stored.path) };
  return streamToTempMedia(dir, key, await store.get(bucket, key));
}

/**
 * Stores `stream` and returns a local file of it for the pipeline, so an upload is read once, written once and never
 * buffered whole: where the store keeps files, that is the stored file itself; otherwise the stream goes to
 * `store.put` and, at the same time, to a temp file. When either side fails both are stopped and the temp file
 * removed; the store removes its own partial object.
 */
export async function storeWithLocalCopy(
  stream: Readable,
  store: ObjectStore,
  target: { bucket: string; key: string; contentType: string; maxBytes: number },
  dir: string,
): Promise<{ size: number; local: TempMedia }> {
  const options = { contentType: target.contentType, maxBytes: target.maxBytes };
  if (store.hasLocalFiles) {
    const { size, sha256 } = await store.put(target.bucket, target.key, stream, options);
    try {
      const local = await storedFile(store, target.bucket, target.key);
      if (!local) throw new Error(`the ${store.backend} store keeps files but handed out none`);
      return { size, local: { ...local, sha256 } };
    } catch (error) {
      await store.deletePrefix(target.bucket, target.key).catch(() => undefined);
      throw error;
    }
  }
  const local = await tempPathFor(dir, target.key);
  const toStore = new PassThrough();
  const toFile = createWriteStream(local.path, { flags: 'wx' });
  const stopAll = (error: Error) => {
    stream.unpipe();
    stream.destroy();
    toStore.destroy(error);
    toFile.destroy(error);
  };
  stream.once('error', stopAll);
  // The store may fail before it listens to its input; the failure is reported by put itself.
  toStore.on('error', () => undefined);
  stream.pipe(toStore);
  stream.pipe(toFile);
  const [stored, copied] = await Promise.allSettled([
    store.put(target.bucket, target.key, toStore, options).catch((error: Error) => {
      stopAll(error);
      throw error;
    }),
    finished(toFile).catch((error: Error) => {
      stopAll(error);
      throw error;
    }),
  ]);
  if (stored.status === 'rejected' || copied.status === 'rejected') {
    await local.remove();
    if (stored.status === 'fulfilled') await store.deletePrefix(target.bucket, target.key).catch(() => undefined);
    throw stored.status === 'rejected' ? stored.reason : (copied as PromiseRejectedResult).reason;
  }
  return { size: stored.value.size, local: { ...local, sha256: stored.value.sha256 } };
}
