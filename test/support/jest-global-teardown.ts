/** Runs once after every test (jest `globalTeardown`): removes the run's temporary folder (jest-global-setup.ts). */
import { rm } from 'node:fs/promises';
import path from 'node:path';

export default async function globalTeardown(): Promise<void> {
  // The same process as the setup, so TMPDIR is the folder it made (checked by name before anything is removed).
  const dir = process.env.TMPDIR;
  if (dir && path.basename(dir).startsWith('argus-test-')) await rm(dir, { recursive: true, force: true });
}
