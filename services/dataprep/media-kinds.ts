import { mediaTypeFromName, type MediaType } from '../lib/media/index.js';

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
export function mediaTypeFromContentType(contentType: string | undefined): MediaType | undefined {
  const ext = contentType && CONTENT_TYPE_EXTENSIONS[contentType.split(';')[0].trim().toLowerCase()];
  return ext ? mediaTypeFromName(`x.${ext}`) : undefined;
}

/** Content type a stored file is served with, from its (detected, corrected) extension. */
export function contentTypeOf(filename: string): string {
  return mediaTypeFromName(filename)?.mime ?? 'application/octet-stream';
}
