/**
 * Runs once before any test (jest `globalSetup`), in the process that then starts the test workers, so that what it
 * puts in the environment is what every worker and every process a test spawns inherits.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export default async function globalSetup(): Promise<void> {
  // Every temporary file or folder of the run (os.tmpdir() reads TMPDIR) lands in one folder removed at the end,
  // whatever a test or a library forgot to delete (jest-global-teardown.ts).
  process.env.TMPDIR = await mkdtemp(path.join(os.tmpdir(), 'argus-test-'));
  // Tests that create onnxruntime sessions directly: no telemetry upload, device id or /tmp/mat-debug-<pid>.log
  // (services/lib/inference/session.ts does the same for Argus itself).
  process.env.ORT_DISABLE_TELEMETRY = '1';
}
