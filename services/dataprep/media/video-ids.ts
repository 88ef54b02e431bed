import { randomUUID } from 'node:crypto';
import path from 'node:path';

/** Allowed video ids: one path segment of letters, digits, `_` and `-` (no dots, so no traversal or hidden names). */
export const VIDEO_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** A new video id (a UUID). */
export function newVideoId(): string {
  return randomUUID();
}

/**
 * A file name safe as the last segment of an object key: the base name of what the client sent, with anything but
 * letters, digits, `.`, `_` and `-` replaced by `_`, never starting with a dot, at most 200 characters.
 */
export function safeFilename(name: string | undefined, fallback: string): string {
  const base = path.posix.basename(String(name ?? '').replace(/\\/g, '/'));
  let safe = base.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  if (safe.length > 200) {
    const dot = safe.lastIndexOf('.');
    const ext = dot > 0 && safe.length - dot <= 10 ? safe.slice(dot) : '';
    safe = safe.slice(0, 200 - ext.length) + ext;
  }
  return safe || fallback;
}
