import path from 'node:path';
import { fileTypeFromBuffer, fileTypeFromFile } from 'file-type';

/** Whether media is processed by frame extraction (video) or embedded directly (image). */
export type MediaKind = 'video' | 'image';

/** A supported media type: kind, canonical extension (no dot) and MIME type. */
export interface MediaType {
  kind: MediaKind;
  ext: string;
  mime: string;
}

/** Image extensions the service accepts (lower case, no dot). */
export const ACCEPTED_IMAGE_EXTENSIONS = ['jpg', 'jpeg', 'png', 'webp', 'bmp', 'gif'] as const;
/** Video extensions the service accepts: MP4 only. */
export const ACCEPTED_VIDEO_EXTENSIONS = ['mp4'] as const;
/** Every accepted extension, for messages and directory walks. */
export const ACCEPTED_EXTENSIONS: readonly string[] = [...ACCEPTED_VIDEO_EXTENSIONS, ...ACCEPTED_IMAGE_EXTENSIONS];

const BY_EXTENSION: Record<string, MediaType> = {
  mp4: { kind: 'video', ext: 'mp4', mime: 'video/mp4' },
  jpg: { kind: 'image', ext: 'jpg', mime: 'image/jpeg' },
  jpeg: { kind: 'image', ext: 'jpg', mime: 'image/jpeg' },
  png: { kind: 'image', ext: 'png', mime: 'image/png' },
  webp: { kind: 'image', ext: 'webp', mime: 'image/webp' },
  bmp: { kind: 'image', ext: 'bmp', mime: 'image/bmp' },
  gif: { kind: 'image', ext: 'gif', mime: 'image/gif' },
};

// file-type names the ISO-BMFF brands it recognises; M4V is an MP4 with an Apple brand.
const DETECTED_ALIASES: Record<string, string> = { m4v: 'mp4' };

function fromDetected(result: { ext: string; mime: string } | undefined): MediaType | undefined {
  if (!result) return undefined;
  return BY_EXTENSION[DETECTED_ALIASES[result.ext] ?? result.ext];
}

/**
 * Detects the real media type from content (magic bytes), ignoring any name or declared type.
 * Accepts a buffer (the first few KB suffice) or a local file path; undefined when unsupported.
 */
export async function detectMediaType(input: Uint8Array | string): Promise<MediaType | undefined> {
  const result = typeof input === 'string' ? await fileTypeFromFile(input) : await fileTypeFromBuffer(input);
  return fromDetected(result);
}

/** The media type a file name's extension claims (case-insensitive); undefined when not accepted. */
export function mediaTypeFromName(filename: string): MediaType | undefined {
  return BY_EXTENSION[path.extname(filename).slice(1).toLowerCase()];
}

/** The file name with its extension replaced by the detected type's canonical one (`photo.jpg` holding PNG → `photo.png`). */
export function withDetectedExtension(filename: string, type: MediaType): string {
  const current = path.extname(filename);
  const base = current ? filename.slice(0, -current.length) : filename;
  const claimed = mediaTypeFromName(filename);
  // Keep `.jpeg` when the content is JPEG: only a wrong extension is corrected.
  if (claimed && claimed.mime === type.mime) return filename;
  return `${base || 'media'}.${type.ext}`;
}
