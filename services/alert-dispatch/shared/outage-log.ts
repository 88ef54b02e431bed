import type { Logger } from '../../lib/log/index.js';

/**
 * Logs an outage of the shared state once: a `warn` line at its first failed operation (saying what every feature
 * does meanwhile) and an `info` line at the first success after it — never one line per request.
 */
export class OutageLog {
  private down = false;

  constructor(
    private readonly logger: Logger,
    /** What the features do while the shared state is unreachable, for the warn line. */
    private readonly consequences: Record<string, string>,
  ) {}

  /** An operation failed because the shared state is unreachable. */
  failed(feature: string, error: unknown): void {
    if (this.down) return;
    this.down = true;
    this.logger.warn('shared state unavailable; degraded until it is back', {
      first_failure: feature,
      error: error instanceof Error ? error.message : String(error),
      ...this.consequences,
    });
  }

  /** An operation succeeded: an outage, if there was one, is over. */
  succeeded(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.info('shared state reachable again');
  }
}
