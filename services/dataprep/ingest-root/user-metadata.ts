import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { MetadataValue } from '../../lib/vectors/index.js';
import { isReservedMetadataKey } from '../pipeline/index.js';
import type { IngestRoot } from './ingest-root.js';

/** Keys user metadata may use (contract). */
export const USER_METADATA_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** Largest sidecar file read; a bigger one is skipped with a warning. */
const SIDECAR_MAX_BYTES = 64 * 1024;

/** User metadata after the contract's rules: accepted entries, skipped ones (warnings) and reserved keys used. */
export interface CheckedMetadata {
  metadata: Record<string, MetadataValue>;
  warnings: string[];
  /** Canonical keys the input tried to use: the request fails with 400. */
  reserved: string[];
}

type Scalar = string | number | boolean;

function isScalar(value: unknown): value is Scalar {
  return (
    typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))
  );
}

/**
 * Applies the contract's rules to user metadata from `origin` (request or a sidecar file): a reserved canonical key
 * is reported (400 for the caller), a key outside the pattern or a value that is neither a scalar nor a list of
 * scalars is skipped with a warning.
 */
export function checkUserMetadata(input: Record<string, unknown>, origin: string): CheckedMetadata {
  const checked: CheckedMetadata = { metadata: {}, warnings: [], reserved: [] };
  for (const [key, value] of Object.entries(input)) {
    if (isReservedMetadataKey(key)) {
      checked.reserved.push(key);
    } else if (!USER_METADATA_KEY.test(key)) {
      checked.warnings.push(
        `${origin}: metadata key "${key.slice(0, 80)}" skipped (keys must match ${USER_METADATA_KEY.source})`,
      );
    } else if (isScalar(value) || (Array.isArray(value) && value.every(isScalar))) {
      checked.metadata[key] = value;
    } else {
      checked.warnings.push(`${origin}: metadata "${key}" skipped (values must be a scalar or a list of scalars)`);
    }
  }
  return checked;
}

/** What a sidecar file adds to one media file: tags and metadata, plus warnings and reserved keys it used. */
export interface SidecarMetadata extends CheckedMetadata {
  tags: string[];
}

async function readSidecarFile(root: IngestRoot, relative: string): Promise<string | undefined> {
  const file = await root.resolveFile(relative);
  if (!file) return undefined;
  if (file.size > SIDECAR_MAX_BYTES) throw new Error(`larger than ${SIDECAR_MAX_BYTES} bytes`);
  return readFile(file.real, 'utf8');
}

/**
 * The sidecar of the media file at `mediaRelative`: `meta/<file name>.json` next to it, else `meta/<name without
 * extension>.json`. A sidecar that is unreadable, not JSON or not an object is skipped with a warning; its `tags`
 * (strings) are added to the request's tags, every other key is user metadata.
 */
export async function readSidecar(root: IngestRoot, mediaRelative: string): Promise<SidecarMetadata> {
  const dir = path.posix.dirname(mediaRelative);
  const name = path.posix.basename(mediaRelative);
  const candidates = [`${name}.json`, `${name.slice(0, name.length - path.posix.extname(name).length)}.json`];
  const empty: SidecarMetadata = { metadata: {}, warnings: [], reserved: [], tags: [] };
  for (const candidate of new Set(candidates)) {
    const relative = path.posix.join(dir, 'meta', candidate);
    let text: string | undefined;
    try {
      text = await readSidecarFile(root, relative);
    } catch (error) {
      return { ...empty, warnings: [`${relative}: sidecar skipped (${(error as Error).message})`] };
    }
    if (text === undefined) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { ...empty, warnings: [`${relative}: sidecar skipped (not valid JSON)`] };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return { ...empty, warnings: [`${relative}: sidecar skipped (not a JSON object)`] };
    }
    const { tags, ...rest } = parsed as Record<string, unknown>;
    const checked = checkUserMetadata(rest, relative);
    const tagList = tags === undefined ? [] : Array.isArray(tags) ? tags : [tags];
    const goodTags = tagList.filter((t): t is string => typeof t === 'string' && t.length > 0 && t.length <= 256);
    if (goodTags.length !== tagList.length) checked.warnings.push(`${relative}: tags that are not strings skipped`);
    return { ...checked, tags: goodTags };
  }
  return empty;
}

/** Request metadata with a file's sidecar merged over it (the sidecar wins on a collision), and the merged tags. */
export function mergeMetadata(
  request: { metadata: Record<string, MetadataValue>; tags: string[] },
  sidecar: SidecarMetadata,
): { metadata: Record<string, MetadataValue>; tags: string[] } {
  return {
    metadata: { ...request.metadata, ...sidecar.metadata },
    tags: [...new Set([...request.tags, ...sidecar.tags])],
  };
}
