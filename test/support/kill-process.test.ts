import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { killProcess } from './kill-process.js';

/** A Node child that idles until killed. */
const idler = () => spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)'], { stdio: 'ignore' });

describe('killProcess', () => {
  it('kills a running child and resolves once it has exited', async () => {
    const child = idler();
    await killProcess(child);
    expect(child.signalCode).toBe('SIGKILL');
  });

  it('resolves at once for a child a signal ended before (its exit event has passed), and for none', async () => {
    const child = idler();
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
    expect(child.exitCode).toBeNull();
    await killProcess(child);
    await killProcess(undefined);
    expect(child.signalCode).toBe('SIGTERM');
  });
});
