import { mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { importDefaultModels } from '../../services/lib/inference/import/index.js';
import { isProcessAlive } from '../../services/lib/process/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The models directory tests use: ARGUS_MODELS_DIR when set, else the repo's git-ignored `.models/`. */
export function testModelsDir(): string {
  return path.resolve(process.env.ARGUS_MODELS_DIR ?? path.join(repoRoot, '.models'));
}

/**
 * Runs `work` while holding `<dir>/.import.lock` (O_EXCL create), so parallel jest workers convert once and the others
 * wait; a lock left by a dead process is taken over.
 */
async function withImportLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const lockFile = path.join(dir, '.import.lock');
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(await readFile(lockFile, 'utf8').catch(() => ''));
      if (owner && !isProcessAlive(owner)) await rm(lockFile, { force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockFile}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockFile, { force: true });
  }
}

let ensured: Promise<string> | undefined;

/** Imports the default models into the test models directory once (per process, and once across workers); returns it. */
export function ensureDefaultModels(): Promise<string> {
  ensured ??= (async () => {
    const dir = testModelsDir();
    await mkdir(dir, { recursive: true });
    await withImportLock(dir, () => importDefaultModels(dir));
    return dir;
  })();
  return ensured;
}
