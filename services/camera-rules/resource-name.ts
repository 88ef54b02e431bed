import { createHash } from 'node:crypto';

/**
 * A Kubernetes object name for any text (a rule id, a camera name): a readable slug of it and 8 hex digits of its
 * SHA-256, so that any text gives a valid name and two texts never share one (texts differing only in case or
 * punctuation get other hashes). `fallback` names a text with nothing sluggable.
 */
export function objectNameFor(text: string, fallback: string): string {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  const hash = createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 8);
  return `${slug || fallback}-${hash}`;
}
