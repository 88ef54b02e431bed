import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { EmbeddedResourceStore, StoreInUseError } from './drivers/embedded/index.js';
import { newIngestJob } from './ports/resource-store.contract.js';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'testing', 'restart-fixture.ts');
const children = new Set<ChildProcess>();
let dir: string | undefined;

afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

/** Starts the fixture; `lines` resolves each stdout line waited for, `exit` with the exit code or signal. */
function startFixture(dataDir: string, marker: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dataDir, marker], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const seen: string[] = [];
  const waiting: Array<{ line: string; resolve: () => void }> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    seen.push(line);
    for (const w of waiting.filter((w) => w.line === line)) w.resolve();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stderr });
    }),
  );
  const line = (wanted: string) =>
    seen.includes(wanted) ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ line: wanted, resolve }));
  return { child, line, exit, seen };
}

describe('IngestJob restart recovery (a real process killed with SIGKILL)', () => {
  it('continues an interrupted job after a restart: every item done exactly once, the job completes', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'argus-restart-'));
    const marker = path.join(dir, 'marker.log');
    const store = await EmbeddedResourceStore.open({ dir: path.join(dir, 'control-plane') });
    await store.create('IngestJob', newIngestJob('job-a', 'default', 5));
    await store.close();

    const first = startFixture(dir, marker, { BLOCK_AT_ITEM: '2' });
    await first.line('start 2');
    // While it runs, no second process may serve the same directory (it would hand out versions twice).
    await expect(EmbeddedResourceStore.open({ dir: path.join(dir, 'control-plane') })).rejects.toBeInstanceOf(
      StoreInUseError,
    );
    first.child.kill('SIGKILL');
    expect((await first.exit).signal).toBe('SIGKILL');

    const second = startFixture(dir, marker);
    const exited = await second.exit;
    expect(exited).toMatchObject({ code: 0, stderr: '' });
    expect(second.seen).toEqual(['start 2', 'start 3', 'start 4', 'finished job-a completed']);

    const lines = (await fs.readFile(marker, 'utf8')).trim().split('\n');
    for (const index of [0, 1, 2, 3, 4]) {
      expect(lines.filter((l) => l === `done ${index}`)).toHaveLength(1);
    }
    expect(lines.filter((l) => l === 'start 2')).toHaveLength(2);

    const reopened = await EmbeddedResourceStore.open({ dir: path.join(dir, 'control-plane') });
    const job = await reopened.get('IngestJob', 'default', 'job-a');
    await reopened.close();
    expect(job?.status).toMatchObject({ state: 'completed', completed: 5, failed: 0, progress: '5/5' });
    expect(job?.status?.items?.map((i) => i.index)).toEqual([0, 1, 2, 3, 4]);
  });
});
