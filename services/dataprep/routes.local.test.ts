import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalObjectStore } from '../lib/storage/index.js';
import { describeDataprepRoutes } from './testing/route-suite.js';

let root: string | undefined;

describeDataprepRoutes({
  name: 'local',
  readsFailWhenBroken: false,
  async open() {
    root = await mkdtemp(path.join(os.tmpdir(), 'dataprep-local-'));
    return new LocalObjectStore(path.join(root, 'media'));
  },
  async broken() {
    // A root below a regular file: every filesystem call fails (ENOTDIR), as on a lost mount.
    const blocker = path.join(root!, 'not-a-directory');
    await writeFile(blocker, 'x');
    return new LocalObjectStore(path.join(blocker, 'media'));
  },
  async stop() {
    if (root) await rm(root, { recursive: true, force: true });
  },
});
