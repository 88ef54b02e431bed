import { HttpError, parseHttpUrl } from '../lib/http/index.js';

/** Bounds of image ingestion: size cap of downloads and decodes, download time bound, redirect hops. */
export interface ImageSourceLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

const DATA_URL = /^data:image\/[A-Za-z0-9.+-]+;base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64_URL_SAFE = /^[A-Za-z0-9_-]*={0,2}$/;

const tooLarge = (maxBytes: number) =>
  new HttpError(413, `Image exceeds the size limit of ${Math.floor(maxBytes / (1024 * 1024))} MB`);

/** Decodes bare base64 or a `data:image/...;base64,` URL; 400 for anything else, 413 past `maxBytes`. */
export function decodeBase64Image(input: string, maxBytes: number): Buffer {
  let text = input.trim();
  if (text.startsWith('data:')) {
    const prefix = DATA_URL.exec(text);
    if (!prefix) throw new HttpError(400, 'image_base64 must be bare base64 or a data:image/...;base64, URL');
    text = text.slice(prefix[0].length);
  }
  text = text.replace(/\s+/g, '');
  if (text.length === 0) throw new HttpError(400, 'image_base64 is empty');
  if (!BASE64.test(text) && !BASE64_URL_SAFE.test(text)) throw new HttpError(400, 'image_base64 is not valid base64');
  // Checked on the encoded length so an oversized payload is refused before it is decoded.
  const decodedLength = Math.floor((text.length * 3) / 4) - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);
  if (decodedLength > maxBytes) throw tooLarge(maxBytes);
  const bytes = Buffer.from(text, BASE64.test(text) ? 'base64' : 'base64url');
  if (bytes.length === 0) throw new HttpError(400, 'image_base64 is empty');
  return bytes;
}

/** A downloaded image: its bytes and the URL finally answered (after redirects). */
export interface DownloadedImage {
  bytes: Buffer;
  finalUrl: URL;
}

/**
 * Downloads `imageUrl` within `timeoutMs` (the whole download, body included), following at most `maxRedirects`
 * redirects and only to http/https (InvalidHttpUrlError otherwise, answered 400). The body is streamed and the
 * download aborted past `maxBytes` (413). Network errors, timeouts and non-2xx answers are 400: the source is bad,
 * not the server.
 */
export async function downloadImage(imageUrl: string, limits: ImageSourceLimits): Promise<DownloadedImage> {
  let url = parseHttpUrl(imageUrl, 'image_url');
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), limits.timeoutMs);
  const timeoutError = () =>
    new HttpError(400, `Image download timed out after ${Math.round(limits.timeoutMs / 1000)} s`);
  try {
    for (let hop = 0; ; hop++) {
      let response: Response;
      try {
        response = await fetch(url, { redirect: 'manual', signal: controller.signal });
      } catch {
        throw controller.signal.aborted
          ? timeoutError()
          : new HttpError(400, 'Image could not be downloaded from image_url');
      }
      if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
        await response.body?.cancel();
        if (hop >= limits.maxRedirects)
          throw new HttpError(400, `image_url redirected more than ${limits.maxRedirects} times`);
        url = parseHttpUrl(new URL(response.headers.get('location')!, url).toString(), 'image_url redirect target');
        continue;
      }
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        throw new HttpError(400, `image_url answered HTTP ${response.status}`);
      }
      const declared = Number(response.headers.get('content-length'));
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        await response.body.cancel();
        throw tooLarge(limits.maxBytes);
      }
      const chunks: Buffer[] = [];
      let total = 0;
      const reader = response.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          total += value.byteLength;
          if (total > limits.maxBytes) {
            await reader.cancel();
            throw tooLarge(limits.maxBytes);
          }
          chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
        }
      } catch (error) {
        if (error instanceof HttpError) throw error;
        throw controller.signal.aborted ? timeoutError() : new HttpError(400, 'Image download from image_url failed');
      }
      if (total === 0) throw new HttpError(400, 'image_url returned an empty body');
      return { bytes: Buffer.concat(chunks, total), finalUrl: url };
    }
  } finally {
    clearTimeout(timer);
  }
}
