import { linkAbort, type Unlink } from '../abort/index.js';
import { LlmError } from './llm-error.js';

/** The reason the idle clock aborts a call with. */
const TIMED_OUT = new Error('timed out');
/** The reason a call is aborted with once its answer is no longer wanted. */
const DONE_WITH = new Error('no longer wanted');

/**
 * The life of one model call: one AbortController that the caller's signal, the idle clock and the reader's end all
 * abort, so the upstream request is cancelled whichever comes first. The idle clock runs only while the call waits on
 * the server, from the last sign of progress, so a slow consumer is never mistaken for a silent server.
 */
export class CallScope {
  private readonly controller = new AbortController();
  private lastProgress = performance.now();
  // Linked, not listened to: the caller's signal may be process-long and shared by every call in flight.
  private readonly unlinkCaller: Unlink | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly callerSignal?: AbortSignal,
  ) {
    this.unlinkCaller = callerSignal && linkAbort(callerSignal, this.controller);
  }

  /** The signal to give the HTTP request. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Throws `aborted` when the caller's signal already fired: no request is made. */
  throwIfCallerAborted(): void {
    if (this.callerSignal?.aborted) throw new LlmError('aborted', 'the LLM call was aborted before it started');
  }

  /** The server showed progress (headers, an event) or the consumer handed control back: the idle clock restarts. */
  progress(): void {
    this.lastProgress = performance.now();
  }

  /** Awaits `step` with the idle clock running; any failure comes out as the LlmError that explains it. */
  async guard<T>(step: Promise<T>, what: string): Promise<T> {
    const left = Math.max(0, this.lastProgress + this.timeoutMs - performance.now());
    const timer = setTimeout(() => this.controller.abort(TIMED_OUT), left);
    try {
      return await step;
    } catch (error) {
      throw this.explain(error, what);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Cancels the upstream request (a no-op once its body has been read to the end) and forgets the caller's signal. */
  close(): void {
    this.unlinkCaller?.();
    this.controller.abort(DONE_WITH);
  }

  private explain(error: unknown, what: string): LlmError {
    if (error instanceof LlmError) return error;
    const reason = this.controller.signal.reason;
    if (this.controller.signal.aborted && reason === TIMED_OUT) {
      return new LlmError('timeout', `no ${what} from the LLM within ${this.timeoutMs} ms`);
    }
    if (this.controller.signal.aborted) return new LlmError('aborted', 'the LLM call was aborted');
    return new LlmError('network', `the LLM connection failed while waiting for ${what}: ${networkCause(error)}`);
  }
}

/** A short cause for a fetch failure (undici wraps the socket error in `cause`), never a stack. */
function networkCause(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : 'unknown error';
}
