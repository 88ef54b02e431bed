/**
 * The client programs of hack/openapi-clients/, built only from the generated documents (`npm run typecheck` checks
 * their types), run against every service of a real `argus up`: a document a generated client cannot call with
 * fails here. Each program's requests go through the contract check (its fetch is checkedFetch).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { useAlertDispatch } from '../hack/openapi-clients/alert-dispatch.js';
import { useCameraRules } from '../hack/openapi-clients/camera-rules.js';
import { useCaptionQa } from '../hack/openapi-clients/caption-qa.js';
import { useCaptionRuns } from '../hack/openapi-clients/caption-runs.js';
import { useDataprep } from '../hack/openapi-clients/dataprep.js';
import { useFrameAnalysis } from '../hack/openapi-clients/frame-analysis.js';
import { multiPoseModelsDir } from '../services/frame-analysis/testing/serve-app.js';
import { startArgusUp, type RunningArgusUp } from './support/argus-process.js';
import { checkedRequest } from './support/contract-check.js';
import { fixtureImage, makeTestVideo } from './support/media.js';

let up: RunningArgusUp;
let unpatch: () => void;

beforeAll(async () => {
  up = await startArgusUp(
    ['dataprep', 'alert-dispatch', 'frame-analysis', 'caption-qa', 'caption-runs', 'camera-rules'],
    await multiPoseModelsDir(),
  );
  // openapi-fetch calls the global fetch: every request the programs send is checked against the documents.
  const original = globalThis.fetch;
  globalThis.fetch = (input, init) => checkedRequest(original, input, init);
  unpatch = () => (globalThis.fetch = original);
}, 180_000);

afterAll(async () => {
  unpatch?.();
  await up?.stop();
});

describe('the generated clients call every main operation of a running argus up', () => {
  it('dataprep: uploads a video (a Blob), searches with free-form metadata, lists', async () => {
    const video = await makeTestVideo({ seconds: 2, fps: 5, width: 160, height: 120 });
    const ids = await useDataprep(up.roots.dataprep, new Blob([await readFile(video)], { type: 'video/mp4' }));
    expect(ids[0]).toMatch(/\S/);
  }, 120_000);

  it('alert-dispatch: sends an alert with payloads and tool arguments, executes an action, lists tools', async () => {
    const tools = await useAlertDispatch(up.roots['alert-dispatch']);
    expect(tools).toContain('log_alert');
  });

  it('frame-analysis: analyses frames sent as Blobs', async () => {
    const frame = new Blob([await readFile(fixtureImage('person_multi_det.jpg'))], { type: 'image/jpeg' });
    expect(await useFrameAnalysis(up.roots['frame-analysis'], [frame, frame])).toEqual(expect.any(String));
  }, 120_000);

  it('caption-qa: stores a caption with free-form metadata and reads the streamed answer', async () => {
    expect(await useCaptionQa(up.roots['caption-qa'])).toContain('event: done');
  }, 120_000);

  it('caption-runs: starts, lists and deletes a run', async () => {
    expect(await useCaptionRuns(up.roots['caption-runs'])).toBeGreaterThanOrEqual(1);
  });

  it('camera-rules: adds a rule, lists rules and cameras, reads health', async () => {
    expect(await useCameraRules(up.roots['camera-rules'])).toMatch(/^\d+ rules, \d+ cameras, \S+$/);
  });
});
