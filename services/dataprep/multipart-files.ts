import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { HttpError } from '../lib/http/index.js';
import type { IncomingFile } from './multipart-upload.js';

/**
 * Streams the multipart body of `req` and hands every file part named `field` to `handle`, one after another (a part
 * is read only once the previous one was handled, so at most one file is in flight); other parts are drained.
 * Resolves with what each call returned, in order. 400 when the body is not multipart or malformed, holds no such
 * file, or more than `maxFiles`. When a `handle` call fails or `signal` aborts, reading stops (the request is unpiped
 * and paused; the caller answers with `Connection: close`) and the promise rejects once the running call is done.
 * The multi-file sibling of `multipartUpload` (same abort handling), for POST /media/upload/batch.
 */
export function multipartFiles<T>(
  req: IncomingMessage,
  field: string,
  handle: (file: IncomingFile, index: number) => Promise<T>,
  options: { maxFiles: number; signal?: AbortSignal },
): Promise<T[]> {
  const { maxFiles, signal } = options;
  return new Promise<T[]>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { files: maxFiles + 1, fields: 32, parts: maxFiles + 64, fieldSize: 64 * 1024 },
      });
    } catch {
      reject(new HttpError(400, `Expected a multipart/form-data body with "${field}" parts`));
      return;
    }
    const results: T[] = [];
    let chain: Promise<void> = Promise.resolve();
    let failure: unknown;
    let count = 0;
    let settled = false;
    // Settles once every file handed out so far is handled: on the parser's close, or at once after a failure (a
    // stopped request never lets the parser close).
    const settle = () => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      void chain.then(() => {
        if (failure !== undefined) reject(failure);
        else if (count === 0) reject(new HttpError(400, `Form field "${field}" with at least one file is required`));
        else resolve(results);
      });
    };
    const stop = (error: unknown) => {
      failure ??= error;
      req.unpipe(parser);
      req.pause();
      settle();
    };
    parser.on('file', (name, stream, info) => {
      if (name !== field || failure !== undefined) {
        stream.resume();
        return;
      }
      const index = count++;
      if (index >= maxFiles) {
        stream.resume();
        stop(new HttpError(400, `Too many files: a batch holds at most ${maxFiles}`));
        return;
      }
      chain = chain.then(async () => {
        if (failure !== undefined) {
          stream.resume();
          return;
        }
        try {
          results.push(await handle({ stream, filename: info.filename ?? '', mimeType: info.mimeType }, index));
        } catch (error) {
          stream.destroy();
          stop(error);
        }
      });
    });
    parser.on('error', () => stop(new HttpError(400, 'Malformed multipart body')));
    parser.on('close', settle);
    const onAbort = () => {
      stop(signal!.reason);
      parser.destroy(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.pipe(parser);
  });
}
