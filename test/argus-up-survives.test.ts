import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { multiPoseModelsDir } from '../services/frame-analysis/testing/serve-app.js';
import { startArgusUp, type ArgusProcess, type RunningArgusUp } from './support/argus-process.js';
import { malformedSweep } from './support/malformed-sweep.js';
import { SWEPT_SERVICES as SERVICES } from './support/swept-services.js';

let up: RunningArgusUp;
let argus: ArgusProcess;
/** Each service's API base URL in the running process. */
const apis: Record<string, string> = {};

beforeAll(async () => {
  up = await startArgusUp(Object.keys(SERVICES), await multiPoseModelsDir());
  argus = up.process;
  for (const [name, root] of Object.entries(up.roots)) apis[name] = `${root}${SERVICES[name].basePath}`;
}, 180_000);

afterAll(() => up?.stop());

describe('argus up against the most dangerous malformed requests', () => {
  // Each service's sweep checks the health of all four after every case: one process holds them all, so a request
  // that takes one service down takes every one down.
  it.each(Object.keys(SERVICES))(
    'keeps the process and every service answering through the sweep of %s',
    async (name) => {
      const report = await malformedSweep({
        base: apis[name],
        endpoints: SERVICES[name].endpoints,
        errorShape: SERVICES[name].errorShape,
        health: Object.values(apis).map((api) => `${api}/health`),
        only: 'dangerous',
      });
      expect(report.failures).toEqual([]);
      expect(report.cases).toBeGreaterThan(0);
      expect(argus.child.exitCode).toBeNull();
      expect(argus.stderr()).not.toMatch(/Unhandled 'error' event|Unexpected end of form/);
    },
    180_000,
  );
});
