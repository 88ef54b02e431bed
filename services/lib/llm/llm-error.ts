/** What went wrong with a model call. */
export type LlmErrorKind = 'timeout' | 'status' | 'protocol' | 'network' | 'aborted';

/**
 * A failed model call. The message is short and safe to log or show: never the API key, never a stack, at most a
 * bounded excerpt of what the server said.
 */
export class LlmError extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    /** The HTTP status, for kind `status`. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}
