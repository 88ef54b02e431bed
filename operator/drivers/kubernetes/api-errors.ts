import { ApiException } from '@kubernetes/client-node';
import { AlreadyExistsError, ConflictError, InvalidError, NotFoundError } from '../../ports/index.js';

/** The HTTP status of a failed API call (ApiException, or a watch's error), or undefined for other errors. */
export function statusCode(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  const code = (error as { statusCode?: unknown; code?: unknown } | undefined)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** The metav1.Status an API server answered with, when the error carries one. */
function apiStatus(error: ApiException<unknown>): { reason?: string; message?: string } {
  const body = error.body;
  if (body && typeof body === 'object') return body as { reason?: string; message?: string };
  try {
    return JSON.parse(String(body));
  } catch {
    return {};
  }
}

/**
 * Maps an API server refusal onto the ResourceStore errors: 409 Conflict → ConflictError, 409 AlreadyExists →
 * AlreadyExistsError, 404 → NotFoundError, 422 Invalid and 400 strict-decoding → InvalidError. Anything else is
 * returned as an Error naming the status and reason only (the body may hold more than a log should).
 */
export function toStoreError(error: unknown, what: string): Error {
  if (!(error instanceof ApiException)) return error instanceof Error ? error : new Error(String(error));
  const { reason, message } = apiStatus(error);
  const detail = `${what}: ${message ?? reason ?? `HTTP ${error.code}`}`;
  if (error.code === 409 && reason === 'AlreadyExists') return new AlreadyExistsError(detail);
  if (error.code === 409) return new ConflictError(detail);
  if (error.code === 404) return new NotFoundError(detail);
  if (error.code === 422 || error.code === 400) return new InvalidError(detail, message ? [message] : []);
  return new Error(`${what}: HTTP ${error.code}${reason ? ` ${reason}` : ''}`);
}

/** A short description of a failure for logs: the status and reason of an API refusal, never its headers or body. */
export function describeError(error: unknown): string {
  if (error instanceof ApiException) {
    const { reason } = apiStatus(error);
    return `HTTP ${error.code}${reason ? ` ${reason}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}
