import { linkAbort, type Unlink } from '../../lib/abort/index.js';
import { roundMs } from '../../lib/http/index.js';
import type { Logger } from '../../lib/log/index.js';
import { ToolError, ToolRefusal, type DispatchTool, type ToolContext, type ToolOutput } from '../tools/tool.js';
import type { ActionRequest, ToolRunResult } from './types.js';

/** Sleeps `ms`, waking early (rejecting) when `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * Real timer-based sleep. The signal is usually the process-long shutdown signal shared by every dispatch in flight:
 * the sleep links to it (one listener on it for all of them) and unlinks when the timer fires.
 */
export const timerSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (!signal) return void setTimeout(resolve, ms);
    if (signal.aborted) return reject(signal.reason);
    const wake = new AbortController();
    const unlink = linkAbort(signal, wake);
    const timer = setTimeout(() => {
      unlink();
      resolve();
    }, ms);
    wake.signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** Time-out and retry policy of tool runs. */
export interface RetryPolicy {
  /** Time limit of one attempt. */
  timeoutMs: number;
  /** Attempts in all (1 = no retry). */
  maxAttempts: number;
  /** First back-off delay; doubled each retry, with ±20% jitter. */
  baseDelayMs: number;
  /** Upper bound of any delay, Retry-After included. */
  maxDelayMs: number;
  sleep?: Sleep;
}

/** Defaults: 10 s per attempt, 3 attempts, 250 ms doubling back-off, delays capped at 10 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  timeoutMs: 10_000,
  maxAttempts: 3,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
};

class AttemptTimeout extends Error {}

/** The reason of an aborted signal, as a failed tool's error text. */
function abortMessage(signal: AbortSignal): string {
  const reason = signal.reason;
  return reason instanceof Error ? reason.message : String(reason ?? 'aborted');
}

/** Milliseconds since `started` at 0.1 ms resolution. */
function elapsedMs(started: number): number {
  return roundMs(performance.now() - started);
}

/**
 * One attempt of a tool run, rejecting at the time-out even when the tool ignores its signal. The AbortSignal is
 * created only when the tool reads it (most local tools never do); one read after a time-out or a shutdown gets an
 * already aborted signal, so every tool sees the same abort semantics and every attempt has its timer. A class, not
 * closures: tsx/esbuild wraps every named closure in a `__name` call, which shows on the dispatch path.
 */
class Attempt implements ToolContext {
  private controller: AbortController | undefined;
  private timedOut: AttemptTimeout | undefined;
  private unlinkOuter: Unlink | undefined;
  private timer: NodeJS.Timeout | undefined;
  private settled = false;

  constructor(
    readonly request: ActionRequest,
    readonly args: Record<string, unknown>,
    readonly snapshotPath: string | null,
    readonly logger: Logger,
    private readonly outer: AbortSignal | undefined,
  ) {}

  /** The attempt's signal, made on first read. */
  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      const outer = this.outer;
      if (this.timedOut) controller.abort(this.timedOut);
      else if (outer?.aborted) controller.abort(outer.reason);
      else if (outer && !this.settled) this.unlinkOuter = linkAbort(outer, controller);
    }
    return this.controller.signal;
  }

  /** Runs `tool` with this attempt as its context. */
  run(tool: DispatchTool, timeoutMs: number): Promise<ToolOutput> {
    return new Promise<ToolOutput>((resolve, reject) => {
      this.timer = setTimeout(() => {
        if (this.settled) return;
        this.timedOut = new AttemptTimeout(`timed out after ${timeoutMs} ms`);
        this.controller?.abort(this.timedOut);
        this.settle();
        reject(this.timedOut);
      }, timeoutMs);
      let running: Promise<ToolOutput>;
      try {
        running = tool.run(this);
      } catch (err) {
        this.settle();
        reject(err);
        return;
      }
      Promise.resolve(running).then(
        (output) => {
          if (this.settled) return;
          this.settle();
          resolve(output);
        },
        (err) => {
          if (this.settled) return;
          this.settle();
          reject(err);
        },
      );
    });
  }

  private settle(): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.unlinkOuter?.();
  }
}

/** Input of runTool besides the tool itself. */
export interface RunToolInput {
  request: ActionRequest;
  args: Record<string, unknown>;
  snapshotPath: string | null;
  logger: Logger;
  policy: RetryPolicy;
  /** Aborts every attempt and back-off (service shutdown). */
  signal?: AbortSignal;
}

/**
 * Runs a tool with a time-out per attempt and bounded retries: time-outs and retryable ToolErrors back off
 * exponentially (a peer's Retry-After replaces the computed delay, both capped); anything else fails at once.
 * Never throws: the failure is part of the result, so one tool cannot fail the dispatch or its siblings.
 */
export async function runTool(tool: DispatchTool, input: RunToolInput): Promise<ToolRunResult> {
  const { policy, logger } = input;
  const sleep = policy.sleep ?? timerSleep;
  const started = performance.now();
  let lastError = 'not run';
  let attempts = 0;
  for (let n = 1; n <= policy.maxAttempts; n++) {
    // After the shutdown abort no new attempt starts (and no tool at all, for the tools still waiting their turn).
    if (input.signal?.aborted) {
      lastError = abortMessage(input.signal);
      break;
    }
    attempts = n;
    try {
      const output = await new Attempt(input.request, input.args, input.snapshotPath, logger, input.signal).run(
        tool,
        policy.timeoutMs,
      );
      return { name: tool.name, success: true, attempts: n, duration_ms: elapsedMs(started), output };
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
      const retryable = err instanceof AttemptTimeout || (err instanceof ToolError && err.retryable);
      if (!retryable || n === policy.maxAttempts || input.signal?.aborted) {
        logger.warn('tool failed', {
          tool: tool.name,
          event_id: input.request.event_id,
          attempts: n,
          error: lastError,
        });
        const failed: ToolRunResult = {
          name: tool.name,
          success: false,
          attempts: n,
          duration_ms: elapsedMs(started),
          error: lastError,
        };
        if (err instanceof ToolRefusal) failed.refused = true;
        return failed;
      }
      const backoff = policy.baseDelayMs * 2 ** (n - 1) * (0.8 + Math.random() * 0.4);
      const delay = Math.min(
        err instanceof ToolError && err.retryAfterMs !== undefined ? err.retryAfterMs : backoff,
        policy.maxDelayMs,
      );
      logger.info('tool retry', {
        tool: tool.name,
        event_id: input.request.event_id,
        attempt: n,
        delay_ms: Math.round(delay),
        error: lastError,
      });
      try {
        await sleep(delay, input.signal);
      } catch {
        lastError = input.signal?.aborted ? abortMessage(input.signal) : lastError;
        break;
      }
    }
  }
  // Only an abort (shutdown) gets here: before an attempt, or during a back-off.
  logger.warn('tool failed', { tool: tool.name, event_id: input.request.event_id, attempts, error: lastError });
  return { name: tool.name, success: false, attempts, duration_ms: elapsedMs(started), error: lastError };
}
