import type { Logger } from '../../lib/log/index.js';
import { argusAuthorization, outboundRequest, UNRESTRICTED } from '../../lib/outbound/index.js';

/** Publishes a run's results on MQTT. */
export interface CaptionPublisher {
  /** A caption (QoS 1); resolves once the broker acknowledged. */
  publish(topic: string, payload: string): Promise<void>;
  /** The run's figures (QoS 0, not awaited: each report carries the totals, so a lost one costs nothing lasting). */
  report(topic: string, payload: string): void;
}

/** An HTTP endpoint the worker posts JSON to (caption-qa's embeddings, alert-dispatch's alerts). */
export interface JsonTarget {
  url: string;
  timeoutMs: number;
  /** The platform's API keys: the first is sent (none: no Authorization header). */
  apiKeys?: readonly string[];
}

/**
 * POSTs `body` as JSON to an operator-configured URL (so no address policy beyond the configuration); resolves with
 * the status, throws on a non-2xx answer or a failed exchange. The body is never logged (frames, captions).
 */
export async function postJson(target: JsonTarget, body: unknown, signal: AbortSignal): Promise<number> {
  const response = await outboundRequest(target.url, {
    policy: UNRESTRICTED,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...argusAuthorization(target.apiKeys ?? []) },
    body: JSON.stringify(body),
    timeoutMs: target.timeoutMs,
    maxBytes: 64 * 1024,
    signal,
  });
  response.discard();
  if (response.status < 200 || response.status >= 300) throw new Error(`answered ${response.status}`);
  return response.status;
}

/** Logs a failed post once per failure, with its count; never its body. */
export function logPostFailure(logger: Logger, what: string, runId: string, error: unknown, count: number): void {
  logger.warn(`${what} failed`, { runId, error: (error as Error)?.message ?? String(error), failures: count });
}
