import type { Readable } from 'node:stream';
import { detectMediaType, mediaTypeFromName, type MediaType } from '../../lib/media/index.js';
import { peekHead } from './stream-head.js';

/** Bytes file-type needs to recognise every supported format. */
const SNIFF_BYTES = 4100;

const CONTENT_TYPE_EXTENSIONS: Record<string, string> = {
  'video/mp4': 'mp4',
  'image/jpeg': 'jpg',
  'image/jpg': 'jpg',
  'image/pjpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/bmp': 'bmp',
  'image/x-bmp': 'bmp',
  'image/x-ms-bmp': 'bmp',
  'image/gif': 'gif',
};

/** The supported media type a declared content type names (parameters ignored), or undefined. */
function mediaTypeFromContentType(contentType: string | undefined): MediaType | undefined {
  const ext = contentType && CONTENT_TYPE_EXTENSIONS[contentType.split(';')[0].trim().toLowerCase()];
  return ext ? mediaTypeFromName(`x.${ext}`) : undefined;
}

/** The media type an uploaded file claims: from its name, else from its declared content type. */
export function claimedMediaType(filename: string, contentType: string | undefined): MediaType | undefined {
  return mediaTypeFromName(filename) ?? mediaTypeFromContentType(contentType);
}

/**
 * The media type of a stream's first bytes, and a stream that reads it whole (the bytes looked at are replayed), so
 * a file is checked before it is stored.
 */
export async function sniffMediaType(source: Readable): Promise<{ type: MediaType | undefined; stream: Readable }> {
  const { head, stream } = await peekHead(source, SNIFF_BYTES);
  return { type: await detectMediaType(head), stream };
}

/** Content type a stored file is served with, from its (detected, corrected) extension. */
export function contentTypeOf(filename: string): string {
  return mediaTypeFromName(filename)?.mime ?? 'application/octet-stream';
}
