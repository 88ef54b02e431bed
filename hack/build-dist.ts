/**
 * Completes `dist/` after `tsc -p tsconfig.build.json` (`npm run build`): copies the runtime files that are not
 * TypeScript (worker modules, shipped YAML) beside their compiled neighbours, writes `dist/package.json` (ESM, and the
 * version the User-Agent reports, read three folders up from `dist/services/lib/user-agent/`) and makes
 * `dist/bin/argus.js` executable. Tests, test support and documentation stay out.
 */
import { chmod, copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
/** The folders compiled into dist (tsconfig.build.json's `include`). */
const SOURCE_ROOTS = ['bin', 'services', 'operator'];
/** Runtime files by extension; TypeScript is compiled, Markdown and test scripts (.py) are not shipped. */
const RUNTIME_EXTENSIONS = new Set(['.mjs', '.cjs', '.json', '.yaml', '.yml']);

async function runtimeFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'testing' && entry.name !== 'node_modules') found.push(...(await runtimeFiles(file)));
    } else if (RUNTIME_EXTENSIONS.has(path.extname(entry.name))) {
      found.push(file);
    }
  }
  return found;
}

const copied: string[] = [];
for (const sourceRoot of SOURCE_ROOTS) {
  for (const file of await runtimeFiles(path.join(root, sourceRoot))) {
    const relative = path.relative(root, file);
    await mkdir(path.dirname(path.join(dist, relative)), { recursive: true });
    await copyFile(file, path.join(dist, relative));
    copied.push(relative);
  }
}
const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
const distPackage = { name: pkg.name, version: pkg.version, private: true, type: 'module' };
await writeFile(path.join(dist, 'package.json'), `${JSON.stringify(distPackage, null, 2)}\n`);
await chmod(path.join(dist, 'bin', 'argus.js'), 0o755);
console.log(`dist/ ready: ${copied.length} runtime file(s) copied (${copied.join(', ')})`);
