import * as ort from 'onnxruntime-node';
import type { ExecutionProvider } from './roles.js';
import { createWorkerSession, type ModelSession } from './worker-session.js';

/** How onnxruntime sessions are created: execution provider and intra-op thread count. */
export interface SessionOptions {
  provider: ExecutionProvider;
  /** Intra-op threads per session; 0 lets onnxruntime choose (one per core). */
  threads: number;
  /** With `cuda`: fall back to a CPU session when the CUDA provider cannot load, instead of failing. */
  fallbackToCpu?: boolean;
  /**
   * Let idle intra-op threads busy-wait for the next run (onnxruntime's default). Off by default: on small shared
   * machines the spinning threads steal the cores that decoding, preprocessing and other services need.
   */
  spinning?: boolean;
  /**
   * `worker` hosts the session in its own worker thread. onnxruntime-node runs inference synchronously on the calling
   * JS thread, so with `main` (the default) every run blocks the event loop for the model's latency.
   */
  isolation?: 'main' | 'worker';
}

/** A created session and the provider it was created for (what health reports as the model's device). */
export interface CreatedSession {
  session: ModelSession;
  provider: ExecutionProvider;
}

/** Thrown when the CUDA execution provider was asked for but cannot be loaded on this machine. */
export class ExecutionProviderUnavailableError extends Error {
  constructor(provider: ExecutionProvider, reason: string) {
    super(`execution provider ${provider} is unavailable: ${reason}`);
    this.name = 'ExecutionProviderUnavailableError';
  }
}

function ortOptions(
  provider: ExecutionProvider,
  threads: number,
  spinning: boolean,
): ort.InferenceSession.SessionOptions {
  return {
    // CPU stays listed after CUDA so nodes CUDA lacks kernels for still run.
    executionProviders: provider === 'cuda' ? ['cuda', 'cpu'] : ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: spinning ? '1' : '0' } } },
  };
}

/**
 * Argus works offline: onnxruntime (1.29 and later, Linux) otherwise starts Microsoft's 1DS telemetry with the first
 * session — uploads, a device id under ~/.cache and a mat-debug-<pid>.log in /tmp. The runtime reads the variable from
 * the process environment when it initialises, which is when the first session of a thread is created: so it is set
 * here, just before (an environment variable is the runtime's only switch), and not as a side effect of importing.
 */
function disableRuntimeTelemetry(): void {
  process.env.ORT_DISABLE_TELEMETRY = '1';
}

/** Creates an onnxruntime session for an ONNX file (path or bytes) with the configured provider and threads. */
export async function createSession(model: string | Uint8Array, options: SessionOptions): Promise<CreatedSession> {
  if (options.isolation === 'worker') {
    try {
      const { session, provider } = await createWorkerSession(model, options);
      return { session, provider };
    } catch (error) {
      if ((error as Error).name === 'ExecutionProviderUnavailableError') {
        const reason = (error as Error).message.replace(/^execution provider cuda is unavailable: /, '');
        throw new ExecutionProviderUnavailableError('cuda', reason);
      }
      throw error;
    }
  }
  disableRuntimeTelemetry();
  const threads = Math.max(0, Math.floor(options.threads));
  try {
    const session =
      typeof model === 'string'
        ? await ort.InferenceSession.create(model, ortOptions(options.provider, threads, options.spinning ?? false))
        : await ort.InferenceSession.create(model, ortOptions(options.provider, threads, options.spinning ?? false));
    return { session, provider: options.provider };
  } catch (error) {
    const message = (error as Error).message;
    if (options.provider !== 'cuda' || !/cuda|shared library|providers/i.test(message)) throw error;
    if (!options.fallbackToCpu) throw new ExecutionProviderUnavailableError('cuda', message);
    return createSession(model, { ...options, provider: 'cpu' });
  }
}
