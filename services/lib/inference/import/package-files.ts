import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Finds an installed npm package's directory by walking up from this file through `node_modules` folders. */
export async function findPackageDir(packageName: string): Promise<string> {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'node_modules', packageName);
    try {
      await access(path.join(candidate, 'package.json'));
      return candidate;
    } catch {
      const parent = path.dirname(dir);
      if (parent === dir)
        throw new Error(`npm package ${packageName} is not installed (needed for the default models)`);
      dir = parent;
    }
  }
}

/** An installed package's version and licence, from its package.json. */
export async function packageInfo(packageDir: string): Promise<{ version: string; license: string }> {
  const json = JSON.parse(await readFile(path.join(packageDir, 'package.json'), 'utf8'));
  return { version: String(json.version), license: String(json.license ?? 'UNKNOWN') };
}
