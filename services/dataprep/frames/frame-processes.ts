import { spawn } from 'node:child_process';
import type { Counter } from 'prom-client';

/** Output of a finished child process: stdout whole (bounded), the tail of stderr. */
export interface ProcessOutput {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Raised when a child writes more to stdout than the caller allowed; the child has been killed. */
export class OutputTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`output exceeds ${limit} bytes`);
    this.name = 'OutputTooLargeError';
  }
}

const STDERR_TAIL = 4000;

/**
 * The frame endpoint's slots for work (ffmpeg, ffprobe, sharp): at most `concurrency` at a time, the rest wait in
 * order (leaving the queue when their signal aborts). Children are killed with SIGKILL when their signal aborts, and
 * `idle()` says when none is left, so a client that went away is seen to leave no process behind.
 */
export class FrameProcesses {
  private active = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];
  private readonly children = new Set<number>();
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly spawned: Counter<'program'>,
  ) {}

  /** Runs `task` in a slot once one is free; rejects with the signal's reason if it aborts while waiting. */
  async inSlot<T>(signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  /**
   * Runs `command` to completion (call it inside a slot), collecting at most `maxStdout` bytes of stdout. Aborting
   * `signal` kills the child (SIGKILL) and rejects with the signal's reason once it has exited.
   */
  run(command: string, args: string[], options: { signal: AbortSignal; maxStdout: number }): Promise<ProcessOutput> {
    const { signal, maxStdout } = options;
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      this.spawned.inc({ program: programName(command) });
      const pid = child.pid;
      if (pid !== undefined) this.children.add(pid);
      const stdout: Buffer[] = [];
      let stdoutBytes = 0;
      let stderr = '';
      let failure: unknown;
      const kill = (reason: unknown) => {
        failure ??= reason;
        child.kill('SIGKILL');
      };
      const onAbort = () => kill(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', (chunk: Buffer) => {
        stdoutBytes += chunk.length;
        if (stdoutBytes > maxStdout) return kill(new OutputTooLargeError(maxStdout));
        stdout.push(chunk);
      });
      child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL)));
      child.once('error', (error) => (failure ??= error));
      // 'close' comes after the exit and after both pipes ended: only then is the child surely gone.
      child.once('close', (code) => {
        signal.removeEventListener('abort', onAbort);
        if (pid !== undefined) this.children.delete(pid);
        this.notifyIdle();
        if (failure !== undefined) reject(failure);
        else resolve({ code, stdout: Buffer.concat(stdout), stderr: stderr.trim() });
      });
    });
  }

  /** Process ids of the children running now. */
  get running(): number[] {
    return [...this.children];
  }

  /** Resolves once no child process is running and no slot is taken. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.children.size === 0 && this.active === 0;
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.active < this.concurrency) {
      this.active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          this.active += 1;
          resolve();
        },
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(entry);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  private release(): void {
    this.active -= 1;
    const next = this.waiting.shift();
    if (next) next.grant();
    else this.notifyIdle();
  }
}

/** `ffmpeg` or `ffprobe` (the label of the spawn counter), whatever directory the binary is in. */
function programName(command: string): string {
  return /ffprobe[^/]*$/.test(command) ? 'ffprobe' : 'ffmpeg';
}
