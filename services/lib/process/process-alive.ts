/**
 * Whether a process with this pid exists, by signal 0: EPERM means it lives under another user (alive), ESRCH
 * that it is gone. Lock files use it to tell a live holder from one that died without removing its lock.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
