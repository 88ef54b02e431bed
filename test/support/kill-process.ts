import type { ChildProcess } from 'node:child_process';

/**
 * Kills `child` (SIGKILL: a crash, as a test wants a broker or server gone) and resolves once it has exited; at once
 * when there is none or it is gone already, by an exit code or by a signal (a crash of its own), whose `exit` event
 * has passed and would never come again.
 */
export async function killProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
