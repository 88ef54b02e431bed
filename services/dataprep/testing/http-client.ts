import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** A file to send in a multipart form. */
export interface FormFile {
  bytes: Buffer;
  filename: string;
  contentType?: string;
}

/** Reads a file for a form, keeping its base name unless `filename` is given. */
export async function formFile(file: string, filename = path.basename(file), contentType?: string): Promise<FormFile> {
  return { bytes: await readFile(file), filename, contentType };
}

/** POSTs `file` as the multipart field `file` to `url`. */
export function postForm(url: string, file: FormFile, field = 'file'): Promise<Response> {
  const form = new FormData();
  form.append(
    field,
    new Blob([new Uint8Array(file.bytes)], { type: file.contentType ?? 'application/octet-stream' }),
    file.filename,
  );
  return fetch(url, { method: 'POST', body: form });
}

/** POSTs JSON. */
export function postJson(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/**
 * Sends a large multipart upload with node:http and resolves with the answer even when the server stops reading
 * and closes the connection before the body was sent (as it does past the upload cap).
 */
export function rawMultipartUpload(
  url: string,
  file: FormFile,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const boundary = '----argus-test-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.filename}"\r\n` +
      `Content-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = Buffer.concat([head, file.bytes, tail]);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
      res.on('error', reject);
    });
    // EPIPE/ECONNRESET while writing are expected once the server has answered and closed.
    req.on('error', (error) => setTimeout(() => reject(error), 2000).unref());
    // Written in pieces so the server sees the cap exceeded long before the end.
    let offset = 0;
    const writeMore = () => {
      while (offset < body.length) {
        const piece = body.subarray(offset, offset + 64 * 1024);
        offset += piece.length;
        if (!req.write(piece)) {
          req.once('drain', writeMore);
          return;
        }
      }
      req.end();
    };
    writeMore();
  });
}
