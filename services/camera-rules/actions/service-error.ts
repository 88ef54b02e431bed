import { OutboundError, type OutboundResponse } from '../../lib/outbound/index.js';

/**
 * A call to dataprep or alert-dispatch failed; `retryable` when trying again may help (unreachable, 5xx, 429);
 * `status` when the service answered.
 */
export class ServiceCallError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ServiceCallError';
  }
}

/** An exchange error as a ServiceCallError: connection failures and time-outs are worth another try. */
export function callFailed(service: string, error: unknown): ServiceCallError {
  if (error instanceof OutboundError) return new ServiceCallError(`${service} does not answer: ${error.message}`, true);
  return new ServiceCallError(`${service} call failed: ${(error as Error)?.message ?? String(error)}`, true);
}

/** A non-2xx answer as a ServiceCallError naming its status and the service's own message (short). */
export async function answerFailed(service: string, response: OutboundResponse): Promise<ServiceCallError> {
  let said = '';
  try {
    const body = JSON.parse((await response.bytes()).toString('utf8')) as Record<string, unknown>;
    const text = [body.message, body.detail].find((value) => typeof value === 'string');
    if (typeof text === 'string') said = `: ${text.slice(0, 300)}`;
  } catch {
    // no readable body: the status says enough
  }
  const retryable = response.status >= 500 || response.status === 429;
  return new ServiceCallError(`${service} answered HTTP ${response.status}${said}`, retryable, response.status);
}
