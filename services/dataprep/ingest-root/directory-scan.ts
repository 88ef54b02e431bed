import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { mediaTypeFromName, type MediaType } from '../../lib/media/index.js';
import type { IngestRoot } from './ingest-root.js';

/** The directory of sidecar files; never ingested, at any depth. */
export const SIDECAR_DIR = 'meta';

/** A supported media file found below the ingest root. */
export interface FoundMedia {
  /** Path relative to the root's real path, `/`-separated: what the job records. */
  relative: string;
  real: string;
  size: number;
  type: MediaType;
}

/** What a directory walk found. */
export interface DirectoryScan {
  files: FoundMedia[];
  /** Entries refused or skipped (symlinks leading out of the root, unreadable entries). */
  warnings: string[];
  /** Files of unsupported types, ignored. */
  unsupported: number;
}

/**
 * Lists the supported media files of the directory `dir` (its real path and its path relative to the root), in name
 * order, descending into sub-directories when `recursive`. `meta/` directories and hidden entries are skipped; every
 * entry is resolved to its real path and refused when that lies outside the root (a symlink pointing out), so the walk
 * never leaves the root; a directory reached twice through symlinks is walked once. Files whose root-relative path
 * is longer than `maxPathLength` (what a job item holds) are skipped with a warning.
 */
export async function scanDirectory(
  root: IngestRoot,
  dir: { relative: string; real: string },
  recursive: boolean,
  maxPathLength: number,
): Promise<DirectoryScan> {
  const scan: DirectoryScan = { files: [], warnings: [], unsupported: 0 };
  const visited = new Set<string>();
  const walk = async (relativeDir: string, realDir: string): Promise<void> => {
    if (visited.has(realDir)) return;
    visited.add(realDir);
    const entries = (await readdir(realDir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const relative = path.posix.join(relativeDir, entry.name);
      if (entry.name === SIDECAR_DIR && (entry.isDirectory() || entry.isSymbolicLink())) continue;
      const real = await root.realInside(path.join(realDir, entry.name));
      if (!real) {
        scan.warnings.push(`${relative}: skipped (it leads outside the ingest data root or cannot be read)`);
        continue;
      }
      const info = await stat(real);
      if (info.isDirectory()) {
        if (recursive) await walk(relative, real);
      } else if (info.isFile()) {
        const type = mediaTypeFromName(entry.name);
        if (!type) scan.unsupported++;
        else if (relative.length > maxPathLength)
          scan.warnings.push(`${relative}: skipped (path longer than ${maxPathLength})`);
        else scan.files.push({ relative, real, size: info.size, type });
      }
    }
  };
  await walk(dir.relative, dir.real);
  return scan;
}
