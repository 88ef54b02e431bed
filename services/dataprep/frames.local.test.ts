import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalObjectStore } from '../lib/storage/index.js';
import { describeFrameRoutes } from './testing/frame-suite.js';

let root: string | undefined;

describeFrameRoutes({
  name: 'local',
  async open() {
    root = await mkdtemp(path.join(os.tmpdir(), 'dataprep-frames-'));
    return new LocalObjectStore(path.join(root, 'media'));
  },
  async stop() {
    if (root) await rm(root, { recursive: true, force: true });
  },
});
