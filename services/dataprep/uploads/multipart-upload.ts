import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { malformedMultipartMessage, openMultipart, printablePartName } from '../../lib/http/index.js';
import { InvalidInputError } from '../errors.js';

/** One file part of a multipart request, streamed as it arrives. */
export interface IncomingFile {
  stream: Readable;
  filename: string;
  mimeType: string;
}

/** How `multipartFiles` reads the file parts of a body. */
export interface MultipartFilesOptions {
  /** The most file parts handed to `handle`. */
  maxFiles: number;
  /**
   * What a file part past `maxFiles` does: `refuse` fails the request (400), `ignore` drains it and the promise
   * resolves as soon as `maxFiles` parts were handled.
   */
  beyondMax: 'refuse' | 'ignore';
  signal?: AbortSignal;
}

/**
 * Streams the multipart body of `req` and hands every file part named `field` to `handle`, one after another (a part
 * is read only once the previous one was handled, so at most one file is in flight); text fields are drained.
 * Resolves with what each call returned, in order. InvalidInputError when the body is not multipart or malformed (cut short
 * included), holds no such file, holds a file part under another name, or (`beyondMax: 'refuse'`) more than
 * `maxFiles`. When a `handle` call fails or `signal` aborts (the client
 * went away, the server stops), reading stops — the request is unpiped and paused, the parser destroyed with the abort
 * reason, which fails the file stream `handle` reads; the HTTP kit settles the unread rest — and the promise
 * rejects with the first failure once the running call is done.
 */
export function multipartFiles<T>(
  req: IncomingMessage,
  field: string,
  handle: (file: IncomingFile, index: number) => Promise<T>,
  options: MultipartFilesOptions,
): Promise<T[]> {
  const { maxFiles, beyondMax, signal } = options;
  return new Promise<T[]>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const parser = openMultipart(req.headers, {
      files: maxFiles + 1,
      fields: 32,
      parts: maxFiles + 64,
      fieldSize: 64 * 1024,
    });
    if (!parser) {
      const parts = maxFiles === 1 ? `a "${field}" part` : `"${field}" parts`;
      reject(new InvalidInputError(`Expected a multipart/form-data body with ${parts}`));
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
        else if (count === 0) {
          const files = maxFiles === 1 ? 'a file' : 'at least one file';
          reject(new InvalidInputError(`Form field "${field}" with ${files} is required`));
        } else resolve(results);
      });
    };
    const stop = (error: unknown) => {
      failure ??= error;
      req.unpipe(parser);
      req.pause();
      settle();
    };
    parser.on('file', (name, stream, info) => {
      if (failure !== undefined || (beyondMax === 'ignore' && count >= maxFiles)) {
        stream.resume();
        return;
      }
      if (name !== field) {
        stream.resume();
        const where = maxFiles === 1 ? 'the file goes' : 'files go';
        stop(
          new InvalidInputError(
            `Unexpected file part "${printablePartName(name)}": ${where} in the form field "${field}"`,
          ),
        );
        return;
      }
      const index = count++;
      if (index >= maxFiles) {
        stream.resume();
        stop(new InvalidInputError(`Too many files: a batch holds at most ${maxFiles}`));
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
          return;
        }
        // Nothing later can add a file: the answer need not wait for the rest of the body.
        if (beyondMax === 'ignore' && results.length === maxFiles) resolve(results);
      });
    });
    parser.on('error', (error) => stop(new InvalidInputError(malformedMultipartMessage(error))));
    parser.on('close', settle);
    // A piped request does not pass its abort on: without this the file stream never ends and `handle` waits for ever.
    const onAbort = () => {
      stop(signal!.reason);
      parser.destroy(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.pipe(parser);
  });
}

/**
 * Streams the multipart body of `req` and hands the first file part named `field` to `handle`; other parts are
 * drained. Resolves with what `handle` returns; fails as `multipartFiles` does.
 */
export async function multipartUpload<T>(
  req: IncomingMessage,
  field: string,
  handle: (file: IncomingFile) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const [result] = await multipartFiles(req, field, handle, { maxFiles: 1, beyondMax: 'ignore', signal });
  return result;
}
