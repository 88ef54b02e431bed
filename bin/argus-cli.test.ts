import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { multiPoseModelsDir } from '../services/frame-analysis/testing/serve-app.js';
import { childEnv, runArgusCli, tempDir } from '../test/support/argus-process.js';
import { freeLoopbackPort } from '../test/support/free-port.js';

let data: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  data = await tempDir('argus-cli-');
});
afterAll(() => data.remove());

const argus = (args: string[], env: Record<string, string> = {}) =>
  runArgusCli(args, childEnv({ ARGUS_DATA_DIR: data.dir, ...env }));

describe('argus command line', () => {
  it.each([['--help'], ['-h'], ['help']])('%s prints the usage and exits 0', async (...args) => {
    const run = await argus(args);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^usage: argus <command>/);
    expect(run.stdout).toMatch(/serve <service> .*dataprep, alert-dispatch, frame-analysis, caption-qa/);
    expect(run.stderr).toBe('');
  });

  it.each([
    [['launch'], "unknown command 'launch'; one of: up, serve, models, dataprep, operator, worker, help"],
    [['dataprep'], 'a dataprep command is needed; one of: reembed'],
    [['dataprep', 'reembed', '--buckt', 'cams'], "unknown option '--buckt'"],
    [['serve', 'dataprop'], "unknown service 'dataprop'; one of: dataprep, alert-dispatch, frame-analysis, caption-qa"],
    [['up', '--detach'], "unknown option '--detach'"],
    [['models', 'import', '--forse'], "unknown option '--forse'"],
    [['serve', 'dataprep', 'alert-dispatch'], "unexpected argument 'alert-dispatch'"],
  ])('%j is refused with exit 2, naming what was wrong', async (args, message) => {
    const run = await argus(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`argus: ${message}`);
    expect(run.stderr).toContain('usage: argus <command>');
    expect(run.stdout).toBe('');
  });

  it('up reports every service’s problems and unknown ARGUS_* names together, before anything listens', async () => {
    const framePort = await freeLoopbackPort();
    const run = await argus(['up'], {
      ARGUS_DATA_DRI: '/elsewhere',
      MM_DATAPREP_HOST_PORT: 'six-thousand',
      ALERT_DISPATCH_PORT: '99999',
      FRAME_ANALYSIS_PORT: String(framePort),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      [
        'invalid configuration for argus:',
        '  - ARGUS_DATA_DRI is not a known setting (did you mean ARGUS_DATA_DIR?)',
        'invalid configuration for dataprep:',
        '  - "MM_DATAPREP_HOST_PORT" must be a number',
        'invalid configuration for alert-dispatch:',
        '  - "ALERT_DISPATCH_PORT" must be a valid port',
        '',
      ].join('\n'),
    );
    // frame-analysis was valid, yet it never listened: nothing starts before everything is validated.
    expect(run.stdout).not.toMatch(/listening/);
    await expect(fetch(`http://127.0.0.1:${framePort}/api/v1/health`)).rejects.toThrow();
  });

  it('dataprep reembed on an archive already in one space converts nothing and exits 0', async () => {
    const modelsDir = await multiPoseModelsDir();
    const run = await argus(['dataprep', 'reembed', '--bucket', 'cams'], { ARGUS_MODELS_DIR: modelsDir });
    expect(run.code).toBe(0);
    const finished = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((record) => record.message === 're-embed finished');
    expect(finished).toMatchObject({ descriptor: 'lowpass-v2', converted: 0, failed: 0, remaining_stale_vectors: 0 });
  });

  it('models import says which models are ready, each present in the models directory', async () => {
    const modelsDir = await multiPoseModelsDir();
    const run = await argus(['models', 'import'], { ARGUS_MODELS_DIR: modelsDir });
    expect(run.code).toBe(0);
    const ready = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((record) => record.message === 'models ready');
    expect(ready.dir).toBe(modelsDir);
    expect(ready.models).toEqual(expect.arrayContaining(['movenet-multipose-lightning', 'movenet-lightning']));
    for (const name of ready.models) expect(existsSync(path.join(modelsDir, name, 'manifest.json'))).toBe(true);
  });
});
