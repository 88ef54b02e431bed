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
 * `Connection: close`.
 */
export function multipartUpload<T>(
  req: IncomingMessage,
  field: string,
  handle: (file: IncomingFile) => Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
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
        reject(malformed ? new HttpError(400, 'Malformed multipart body') : error);
      });
    });
    parser.on('error', () => {
      malformed = true;
      stop();
      if (!handled) reject(new HttpError(400, 'Malformed multipart body'));
    });
    parser.on('close', () => {
      if (!handled) reject(new HttpError(400, `Form field "${field}" with a file is required`));
    });
    req.pipe(parser);
  });
}
