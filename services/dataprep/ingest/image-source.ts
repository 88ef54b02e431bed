import path from 'node:path';
import { parseHttpUrl } from '../../lib/http/index.js';
import { OutboundError, outboundRequest, type AllowList, type OutboundPolicy } from '../../lib/outbound/index.js';
import { InvalidInputError, TooLargeError } from '../errors.js';

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
  new TooLargeError(`Image exceeds the size limit of ${Math.floor(maxBytes / (1024 * 1024))} MB`);

/** Decodes bare base64 or a `data:image/...;base64,` URL; InvalidInputError for anything else, TooLargeError past `maxBytes`. */
export function decodeBase64Image(input: string, maxBytes: number): Buffer {
  let text = input.trim();
  if (text.startsWith('data:')) {
    const prefix = DATA_URL.exec(text);
    if (!prefix) throw new InvalidInputError('image_base64 must be bare base64 or a data:image/...;base64, URL');
    text = text.slice(prefix[0].length);
  }
  text = text.replace(/\s+/g, '');
  if (text.length === 0) throw new InvalidInputError('image_base64 is empty');
  if (!BASE64.test(text) && !BASE64_URL_SAFE.test(text))
    throw new InvalidInputError('image_base64 is not valid base64');
  // Checked on the encoded length so an oversized payload is refused before it is decoded.
  const decodedLength = Math.floor((text.length * 3) / 4) - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);
  if (decodedLength > maxBytes) throw tooLarge(maxBytes);
  const bytes = Buffer.from(text, BASE64.test(text) ? 'base64' : 'base64url');
  if (bytes.length === 0) throw new InvalidInputError('image_base64 is empty');
  return bytes;
}

/** A typed image source of a request or job item: inline base64, or an http(s) URL to download. */
export interface ImageSource {
  type: string;
  image_base64?: string;
  image_url?: string;
}

/** How images may be loaded: the size and time bounds, and the addresses beyond the public ones downloads may reach. */
export interface ImageSourcePolicy {
  limits: ImageSourceLimits;
  allow: AllowList;
}

/** A downloaded image: its bytes and the URL finally answered (after redirects). */
interface DownloadedImage {
  bytes: Buffer;
  finalUrl: URL;
}

/** The address policy of image downloads: public addresses, plus what MM_DATAPREP_IMAGE_URL_ALLOW opens. */
function imageUrlPolicy(allow: AllowList): OutboundPolicy {
  return { allow, publicAddresses: true, setting: 'MM_DATAPREP_IMAGE_URL_ALLOW' };
}

/** A failed download as the input error (too large past the size cap) its client reads: what went wrong, in words. */
function downloadFailure(error: OutboundError, limits: ImageSourceLimits): InvalidInputError | TooLargeError {
  switch (error.failure) {
    case 'too-large':
      return tooLarge(limits.maxBytes);
    case 'timeout':
      return new InvalidInputError(`Image download timed out after ${Math.round(limits.timeoutMs / 1000)} s`);
    case 'dns':
    case 'connect':
      return new InvalidInputError(`Image could not be downloaded from image_url: ${error.message}`);
    default:
      return new InvalidInputError(`image_url ${error.message}`);
  }
}

/**
 * Downloads `imageUrl` through the outbound guard within `timeoutMs` (the whole download, body included), following
 * at most `maxRedirects` redirects, only to http/https and only to addresses the policy allows (every hop checked,
 * the checked address connected to). The body is capped at `maxBytes` (TooLargeError). Refusals, DNS and connection failures,
 * time-outs and non-2xx answers are InvalidInputErrors saying why: the source is bad, not the server.
 */
async function downloadImage(
  imageUrl: string,
  limits: ImageSourceLimits,
  policy: OutboundPolicy,
): Promise<DownloadedImage> {
  const url = parseHttpUrl(imageUrl, 'image_url');
  try {
    const response = await outboundRequest(url, {
      policy,
      timeoutMs: limits.timeoutMs,
      maxRedirects: limits.maxRedirects,
      maxBytes: limits.maxBytes,
    });
    if (response.status < 200 || response.status >= 300) {
      response.discard();
      throw new InvalidInputError(`image_url answered HTTP ${response.status}`);
    }
    const bytes = await response.bytes();
    if (bytes.length === 0) throw new InvalidInputError('image_url returned an empty body');
    return { bytes, finalUrl: response.url };
  } catch (error) {
    throw error instanceof OutboundError ? downloadFailure(error, limits) : error;
  }
}

/**
 * Loads the bytes of a typed image source: decodes base64, or downloads the URL through the outbound guard (both
 * capped). `nameHint` is the last path segment of the URL finally answered, for naming the stored file.
 */
export async function loadImageSource(
  source: ImageSource,
  policy: ImageSourcePolicy,
): Promise<{ bytes: Buffer; nameHint?: string }> {
  const { limits } = policy;
  if (source.type === 'image_base64') return { bytes: decodeBase64Image(source.image_base64!, limits.maxBytes) };
  const { bytes, finalUrl } = await downloadImage(source.image_url!, limits, imageUrlPolicy(policy.allow));
  let name = path.posix.basename(finalUrl.pathname);
  try {
    name = decodeURIComponent(name);
  } catch {
    // keep the encoded name: it is sanitised anyway
  }
  return { bytes, nameHint: name || undefined };
}
