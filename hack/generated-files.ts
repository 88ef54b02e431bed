import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A file a generator owns, by its path relative to the repository root. */
export interface GeneratedFile {
  path: string;
  content: string;
}

/**
 * Writes `files` (and deletes other files with `extension` in the folders they live in), or with `check` only lists
 * what differs from the tree. Returns the problems found in check mode: empty when the tree is up to date.
 */
export async function syncGeneratedFiles(
  root: string,
  files: GeneratedFile[],
  options: { check: boolean; extension: string },
): Promise<string[]> {
  const problems: string[] = [];
  const wanted = new Map(files.map((f) => [path.normalize(f.path), f.content]));
  for (const [relative, content] of wanted) {
    const absolute = path.join(root, relative);
    const current = await readFile(absolute, 'utf8').catch(() => undefined);
    if (current === content) continue;
    if (options.check)
      problems.push(`${relative}: ${current === undefined ? 'missing' : 'differs from the generator'}`);
    else {
      await mkdir(path.dirname(absolute), { recursive: true });
      await writeFile(absolute, content);
    }
  }
  for (const dir of new Set([...wanted.keys()].map((p) => path.dirname(p)))) {
    for (const name of await readdir(path.join(root, dir))) {
      const relative = path.join(dir, name);
      if (!name.endsWith(options.extension) || wanted.has(relative)) continue;
      if (options.check) problems.push(`${relative}: not made by the generator (stale?)`);
      else await rm(path.join(root, relative));
    }
  }
  return problems;
}

/** Runs a generator script: writes, or with `--check` exits 1 listing every out-of-date file. */
export async function runGenerator(name: string, root: string, files: GeneratedFile[], extension: string) {
  const check = process.argv.includes('--check');
  const problems = await syncGeneratedFiles(root, files, { check, extension });
  if (problems.length > 0) {
    console.error(`${problems.join('\n')}\nout of date: run \`npm run ${name}\` and commit the result`);
    process.exit(1);
  }
  console.log(check ? `${name}: ${files.length} file(s) up to date` : `${name}: ${files.length} file(s) written`);
}
