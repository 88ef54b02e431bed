import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { HttpError } from '../lib/http/index.js';

/** One file part of a multipart request, streamed as it arrives. */
export interface IncomingFile {
  stream: Readable;
  filename: string;
  mimeType: string;
}

/**
 * Streams the multipart body of `req` and hands the first file part named `field` to `handle`; other parts are
 * drained. Resolves with what `handle` returns. 400 when the body is not multipart, is malformed, or holds no such
 * file. When `handle` fails, the request is unpiped and paused so nothing more is read; the caller answers with
 * `Connection: close`. When `signal` aborts (the client went away, the server stops) the parser is destroyed with its
 * reason, which fails the file stream `handle` reads, and the promise rejects with that reason once `handle` is done.
 */
export function multipartUpload<T>(
  req: IncomingMessage,
  field: string,
  handle: (file: IncomingFile) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 8, fields: 32, parts: 64, fieldSize: 64 * 1024 } });
    } catch {
      reject(new HttpError(400, 'Expected a multipart/form-data body with a "file" part'));
      return;
    }
    let handled: Promise<T> | undefined;
    let malformed = false;
    const stop = () => {
      req.unpipe(parser);
      req.pause();
    };
    parser.on('file', (name, stream, info) => {
      if (name !== field || handled) {
        stream.resume();
        return;
      }
      handled = handle({ stream, filename: info.filename ?? '', mimeType: info.mimeType });
      handled.then(resolve, (error) => {
        stop();
        stream.destroy();
        reject(aborted ?? (malformed ? new HttpError(400, 'Malformed multipart body') : error));
      });
    });
    parser.on('error', () => {
      malformed = aborted === undefined;
      stop();
      if (!handled) reject(aborted ?? new HttpError(400, 'Malformed multipart body'));
    });
    parser.on('close', () => {
      signal?.removeEventListener('abort', onAbort);
      if (!handled) reject(aborted ?? new HttpError(400, `Form field "${field}" with a file is required`));
    });
    let aborted: unknown;
    // A piped request does not pass its abort on: without this the file stream never ends and `handle` waits for ever.
    const onAbort = () => {
      aborted = signal!.reason;
      stop();
      parser.destroy(aborted as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.pipe(parser);
  });
}
