import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { REPO_ROOT } from '../../../test/support/argus-process.js';

let cacheHome: string;
let modelFile: string;
beforeAll(async () => {
  cacheHome = await mkdtemp(path.join(os.tmpdir(), 'ort-cache-'));
  const dir = path.join(await ensureDefaultModels(), 'movenet-lightning');
  modelFile = path.join(
    dir,
    (await readdir(dir)).find((name) => name.endsWith('.onnx'))!,
  );
});
afterAll(() => rm(cacheHome, { recursive: true, force: true }));

describe('onnxruntime telemetry', () => {
  it('stays off in a process that creates sessions through Argus: no device id, no /tmp/mat-debug log', async () => {
    // A fresh process whose environment does not switch telemetry off (the test run's setup does): session.ts must.
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: cacheHome };
    delete env.ORT_DISABLE_TELEMETRY;
    delete env.NODE_OPTIONS;
    const script = `
      const { createSession } = await import('./services/lib/inference/session.ts');
      const created = await createSession(process.argv[1], { provider: 'cpu', threads: 1 });
      await created.session.release();
      process.stdout.write(String(process.pid));`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script, modelFile],
      { cwd: REPO_ROOT, env },
    );
    expect(Number(stdout)).toBeGreaterThan(0);
    expect(await readdir(cacheHome, { recursive: true })).toEqual([]);
    expect(existsSync(`/tmp/mat-debug-${stdout}.log`)).toBe(false);
  });
});
