import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ALERT_DISPATCH_SWEEP,
  isDetailBody as isAlertBody,
} from '../services/alert-dispatch/testing/sweep-endpoints.js';
import { CAPTION_QA_SWEEP, isDetailBody as isQaBody } from '../services/caption-qa/testing/sweep-endpoints.js';
import { CAMERA_RULES_SWEEP, isHttpValidationBody } from '../services/camera-rules/testing/sweep-endpoints.js';
import { DATAPREP_SWEEP, isStatusMessageBody } from '../services/dataprep/testing/sweep-endpoints.js';
import { multiPoseModelsDir } from '../services/frame-analysis/testing/serve-app.js';
import { FRAME_ANALYSIS_SWEEP, isAnalysisErrorBody } from '../services/frame-analysis/testing/sweep-endpoints.js';
import { CAPTION_RUNS_SWEEP, isRunsErrorBody } from '../services/caption-runs/testing/sweep-endpoints.js';
import { startArgusUp, type ArgusProcess, type RunningArgusUp } from './support/argus-process.js';
import { malformedSweep, type ErrorShape, type SweepEndpoint } from './support/malformed-sweep.js';

/** Each service `argus up` starts: its API base path, swept endpoints and error shape. */
const SERVICES: Record<string, { basePath: string; endpoints: SweepEndpoint[]; errorShape: ErrorShape }> = {
  dataprep: { basePath: '/v1/dataprep', endpoints: DATAPREP_SWEEP, errorShape: isStatusMessageBody },
  'alert-dispatch': { basePath: '/api/v1', endpoints: ALERT_DISPATCH_SWEEP, errorShape: isAlertBody },
  'frame-analysis': { basePath: '/api/v1', endpoints: FRAME_ANALYSIS_SWEEP, errorShape: isAnalysisErrorBody },
  'caption-qa': { basePath: '/api', endpoints: CAPTION_QA_SWEEP, errorShape: isQaBody },
  'caption-runs': { basePath: '/api', endpoints: CAPTION_RUNS_SWEEP, errorShape: isRunsErrorBody },
  'camera-rules': { basePath: '', endpoints: CAMERA_RULES_SWEEP, errorShape: isHttpValidationBody },
};

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
