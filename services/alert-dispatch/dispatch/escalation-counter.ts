import { createHash } from 'node:crypto';
import { SharedStateUnavailableError, type SharedState } from '../../lib/shared-state/index.js';
import type { OutageLog } from '../shared/outage-log.js';
import type { ActionRequest } from './types.js';

/**
 * Counts consecutive YES alerts per alert_name and source_id on the shared state, so that every replica adds to one
 * count: a fixed window from the first alert counted (`count_window_seconds`), and an alert answered NO starts the
 * count again. Shared state unreachable: the count is unknown and the request's own `consecutive_count` decides
 * (the alert is still dispatched; only the service's count is missing), logged once per outage.
 */
export class EscalationCounter {
  constructor(
    private readonly state: SharedState,
    private readonly outage: OutageLog,
  ) {}

  /** Counts `request` and answers the count including it; undefined when the shared state is unreachable. */
  async count(request: ActionRequest, windowSeconds: number): Promise<number | undefined> {
    try {
      const count = await this.state.increment(this.key(request), windowSeconds * 1000);
      this.outage.succeeded();
      return count;
    } catch (error) {
      if (!(error instanceof SharedStateUnavailableError)) throw error;
      this.outage.failed('escalation', error);
      return undefined;
    }
  }

  /** Starts the count of `request`'s alert again (an alert answered NO breaks the run). */
  async reset(request: ActionRequest): Promise<void> {
    try {
      await this.state.delete(this.key(request));
      this.outage.succeeded();
    } catch (error) {
      if (!(error instanceof SharedStateUnavailableError)) throw error;
      this.outage.failed('escalation', error);
    }
  }

  private key(request: ActionRequest): string {
    const id = createHash('sha256')
      .update(JSON.stringify([request.alert_name, request.source_id]))
      .digest('hex');
    return `escalation:${id}`;
  }
}
