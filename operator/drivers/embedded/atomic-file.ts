import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** Suffix of a file being written; such a file is never read back as a resource (a crash may leave one behind). */
export const TEMP_SUFFIX = '.tmp';

/**
 * Writes `data` to `file` so that a reader (or a restart after a crash) sees either the old content or the new, never
 * half of it: write a temp file beside it, fsync it, rename it over the target, fsync the directory.
 */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  const handle = await fs.open(temp, 'w', 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dir);
}

/** Removes `file` (no error when it is gone) and makes the removal durable. */
export async function removeFileDurably(file: string): Promise<void> {
  await fs.rm(file, { force: true });
  await syncDirectory(path.dirname(file));
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
