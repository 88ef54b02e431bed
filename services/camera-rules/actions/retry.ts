import { setTimeout as delay } from 'node:timers/promises';

/** How often and how patiently a step is tried again. */
export interface RetryPolicy {
  /** Tries in all (≥ 1). */
  attempts: number;
  /** Wait before the second try; doubled each time… */
  baseDelayMs: number;
  /** …up to this. */
  maxDelayMs: number;
}

/** Waits `ms` (tests inject one that does not wait, so no test depends on timing); rejects when `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real wait. */
export const realSleep: Sleep = (ms, signal) => delay(ms, undefined, { signal });

/** Every try failed: the last error and how many tries were made. */
export class RetriesExhaustedError extends Error {
  constructor(
    readonly attempts: number,
    readonly last: unknown,
  ) {
    super(`${(last as Error)?.message ?? String(last)} (after ${attempts} attempt${attempts === 1 ? '' : 's'})`);
    this.name = 'RetriesExhaustedError';
  }
}

/** The wait before try `attempt + 1` (attempt counted from 1): exponential, capped. */
export function backoffMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
}

/**
 * Runs `step` until it succeeds, `retryable` says an error is final, or the policy's tries are spent (then
 * RetriesExhaustedError, or the final error as it is); waits with exponential back-off between tries.
 */
export async function withRetry<T>(
  step: (attempt: number) => Promise<T>,
  options: { policy: RetryPolicy; sleep: Sleep; retryable: (error: unknown) => boolean; signal?: AbortSignal },
): Promise<{ value: T; attempts: number }> {
  const { policy, sleep, retryable, signal } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      return { value: await step(attempt), attempts: attempt };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (!retryable(error)) throw new RetriesExhaustedError(attempt, error);
      if (attempt >= policy.attempts) throw new RetriesExhaustedError(attempt, error);
      await sleep(backoffMs(policy, attempt), signal);
    }
  }
}
