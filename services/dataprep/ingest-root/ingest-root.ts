import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../errors.js';

/** True when `target` is `root` itself or lies below it (both absolute, normalised). */
export function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** A file below the ingest root: its path relative to the root (as recorded) and its real path now. */
export interface RootFile {
  relative: string;
  real: string;
  size: number;
}

/**
 * The ingest data root (MM_DATAPREP_INGEST_DATA_ROOT): every directory ingest and every referenced file must lie below
 * it. Paths are checked on their real path (symlinks resolved), so neither `..` nor a symlink can lead out of it, and
 * re-checked whenever a recorded path is used again (worker, listing, download).
 */
export class IngestRoot {
  private realRoot?: Promise<string>;

  constructor(
    /** The root as this process sees it (absolute). */
    readonly root: string,
    /** The same directory as the host sees it (MM_DATAPREP_INGEST_DATA_ROOT_HOST), for `source_path`. */
    private readonly hostRoot?: string,
  ) {}

  /** The root's own real path (the root itself may be a symlink, e.g. a mount point alias). */
  private real(): Promise<string> {
    this.realRoot ??= realpath(this.root).catch((error) => {
      this.realRoot = undefined;
      throw error;
    });
    return this.realRoot;
  }

  /**
   * The real path of the directory `dirPath` names (relative to the root, or absolute inside it). InvalidInputError when it lies
   * outside the root (lexically or through a symlink), does not exist or is not a directory.
   */
  async resolveDirectory(dirPath: string): Promise<{ relative: string; real: string }> {
    const lexical = path.resolve(this.root, dirPath);
    if (!isInside(this.root, lexical)) throw new InvalidInputError('dir_path must lie inside the ingest data root');
    let real: string;
    try {
      real = await realpath(lexical);
    } catch {
      throw new InvalidInputError(`dir_path ${dirPath} does not exist below the ingest data root`);
    }
    const root = await this.real();
    if (!isInside(root, real)) throw new InvalidInputError('dir_path must lie inside the ingest data root');
    if (!(await stat(real)).isDirectory()) throw new InvalidInputError(`dir_path ${dirPath} is not a directory`);
    return { relative: path.relative(root, real), real };
  }

  /**
   * The regular file at `relative` (as recorded in a job or a reference), if it still is one and its real path is
   * still inside the root; undefined when it was moved, deleted, replaced by a symlink leading out, or is unreadable.
   */
  async resolveFile(relative: string): Promise<RootFile | undefined> {
    const lexical = path.resolve(this.root, relative);
    if (path.isAbsolute(relative) || !isInside(this.root, lexical)) return undefined;
    try {
      const real = await realpath(lexical);
      if (!isInside(await this.real(), real)) return undefined;
      const info = await stat(real);
      return info.isFile() ? { relative, real, size: info.size } : undefined;
    } catch {
      return undefined;
    }
  }

  /** The real path of a directory entry found while walking, when it stays inside the root. */
  async realInside(file: string): Promise<string | undefined> {
    try {
      const real = await realpath(file);
      return isInside(await this.real(), real) ? real : undefined;
    } catch {
      return undefined;
    }
  }

  /** A root-relative path as the host sees it (MM_DATAPREP_INGEST_DATA_ROOT_HOST), else as this process sees it. */
  hostPath(relative: string): string {
    return path.posix.join(this.hostRoot ?? this.root, relative);
  }
}
