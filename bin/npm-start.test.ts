import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { multiPoseModelsDir } from '../services/frame-analysis/testing/serve-app.js';
import { isProcessAlive } from '../services/lib/process/index.js';
import { spawnArgus, tempDir, upEnv } from '../test/support/argus-process.js';

let data: Awaited<ReturnType<typeof tempDir>>;
let modelsDir: string;

beforeAll(async () => {
  data = await tempDir('argus-npm-start-');
  modelsDir = await multiPoseModelsDir();
});
afterAll(() => data.remove());

describe('npm start', () => {
  it('stops every service and leaves no node process when npm itself gets SIGTERM', async () => {
    const npm = spawnArgus('npm', ['start', '--silent'], upEnv(data.dir, modelsDir));
    let pid: number | undefined;
    try {
      const up = await npm.waitForRecord((r) => r.message === 'argus is up');
      const urls = npm.records.filter((r) => /listening$/.test(r.message ?? '')).map((r) => String(r.url));
      expect(urls).toHaveLength((up.services as string[]).length);
      for (const url of urls) expect((await fetch(`${url}/metrics`)).status).toBe(200);
      pid = up.pid as number;
      expect(pid).not.toBe(npm.child.pid); // the services run in node, a child of npm

      npm.child.kill('SIGTERM');
      const exit = await npm.exited;

      expect(exit.code).toBe(0);
      expect(isProcessAlive(pid)).toBe(false);
      await npm.closed;
      for (const url of urls) await expect(fetch(`${url}/metrics`)).rejects.toThrow();
      expect(npm.records.map((r) => r.message)).toEqual(
        expect.arrayContaining(['shutting down', 'dataprep stopped', 'alert-dispatch stopped']),
      );
    } finally {
      // Whatever a failure left running goes, the orphaned service process included.
      if (npm.child.exitCode === null) npm.child.kill('SIGKILL');
      if (pid !== undefined && isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
