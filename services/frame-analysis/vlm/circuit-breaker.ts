/** Source of the current time in milliseconds; injected so tests never wait for the open period. */
export type Clock = () => number;

/**
 * Stops calling a failing dependency: `failures` consecutive failures open the circuit for `openMs`; after that one
 * trial call is let through (half-open): its success closes the circuit, its failure opens it again.
 */
export class CircuitBreaker {
  private consecutive = 0;
  private openUntil = 0;
  private trialRunning = false;

  constructor(
    private readonly failures: number,
    private readonly openMs: number,
    private readonly clock: Clock = Date.now,
  ) {}

  /** `open` while calls are refused, `half-open` when the next call is a trial, else `closed`. */
  state(): 'closed' | 'open' | 'half-open' {
    if (this.consecutive < this.failures) return 'closed';
    return this.clock() < this.openUntil || this.trialRunning ? 'open' : 'half-open';
  }

  /** Whether a call may be made now; a half-open circuit lets exactly one through until it reports back. */
  tryAcquire(): boolean {
    const state = this.state();
    if (state === 'closed') return true;
    if (state === 'open') return false;
    this.trialRunning = true;
    return true;
  }

  /** Reports a successful call: the circuit closes. */
  succeeded(): void {
    this.consecutive = 0;
    this.trialRunning = false;
  }

  /** Reports a call that ended without a verdict either way (the caller gave up): a trial may run again. */
  abandoned(): void {
    this.trialRunning = false;
  }

  /** Reports a failed call: at the threshold (or after a failed trial) the circuit opens for `openMs`. */
  failed(): void {
    this.consecutive += 1;
    this.trialRunning = false;
    if (this.consecutive >= this.failures) this.openUntil = this.clock() + this.openMs;
  }

  /** Milliseconds until an open circuit lets a trial through (0 otherwise). */
  retryInMs(): number {
    return this.state() === 'open' ? Math.max(0, this.openUntil - this.clock()) : 0;
  }
}
