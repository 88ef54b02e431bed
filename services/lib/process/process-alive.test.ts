import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { isProcessAlive } from './index.js';

describe('isProcessAlive', () => {
  it('is true for a running process, this one and pid 1 (alive whether or not it may be signalled)', () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(1)).toBe(true);
  });

  it('is false for a process that has exited and been reaped', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    const pid = child.pid!;
    await once(child, 'exit');
    expect(isProcessAlive(pid)).toBe(false);
  });
});
