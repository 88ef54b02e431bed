import { describe, expect, it } from '@jest/globals';
import { parseWorkerArgs, WorkerUsageError } from './worker-command.js';

describe('argus worker --resource (a long-running worker in a Deployment pod)', () => {
  it('reads the resource; the worker is index 0 of 1 whatever JOB_COMPLETION_INDEX says', () => {
    expect(parseWorkerArgs(['camera-watcher', '--resource', 'media/front-door'], 3)).toEqual({
      worker: 'camera-watcher',
      namespace: 'media',
      name: 'front-door',
      index: 0,
      completions: 1,
    });
  });

  it.each([
    [['camera-watcher', '--resource', 'front-door'], /--resource needs <namespace>\/<name>/],
    [['camera-watcher', '--resource', 'Media/front-door'], /--resource needs/],
    [['camera-watcher', '--resource', 'media/a', '--job', 'media/a'], /--job does not apply/],
    [['camera-watcher', '--resource', 'media/a', '--completions', '2'], /--completions does not apply/],
    [['camera-watcher', '--resource'], /unknown or incomplete option --resource/],
  ])('refuses %j', (args, message) => {
    expect(() => parseWorkerArgs(args, undefined)).toThrow(message);
    expect(() => parseWorkerArgs(args, undefined)).toThrow(WorkerUsageError);
  });
});
