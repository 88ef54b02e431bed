import type { Logger } from '../../lib/log/index.js';
import { ToolError, type DispatchTool, type ToolOutput } from '../tools/tool.js';
import type { ActionRequest, ToolRunResult } from './types.js';

/** Sleeps `ms`, waking early (rejecting) when `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Real timer-based sleep. */
export const timerSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
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

/** Runs one attempt, rejecting at the time-out even when the tool ignores its signal. */
async function attempt(run: (signal: AbortSignal) => Promise<ToolOutput>, timeoutMs: number, outer?: AbortSignal) {
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new AttemptTimeout(`timed out after ${timeoutMs} ms`);
      controller.abort(err);
      reject(err);
    }, timeoutMs);
  });
  try {
    return await Promise.race([run(controller.signal), timedOut]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuterAbort);
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
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  let lastError = 'not run';
  for (let n = 1; n <= policy.maxAttempts; n++) {
    try {
      const output = await attempt(
        (signal) =>
          tool.run({ request: input.request, args: input.args, snapshotPath: input.snapshotPath, signal, logger }),
        policy.timeoutMs,
        input.signal,
      );
      return { name: tool.name, success: true, attempts: n, duration_ms: elapsed(), output };
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
        return { name: tool.name, success: false, attempts: n, duration_ms: elapsed(), error: lastError };
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
        break;
      }
    }
  }
  return { name: tool.name, success: false, attempts: policy.maxAttempts, duration_ms: elapsed(), error: lastError };
}
