import type * as ort from 'onnxruntime-node';
import type { ExecutionProvider } from './roles.js';

// What crosses the thread boundary between a ModelSession (worker-session.ts) and its worker (session-worker.ts).

/** A tensor as it crosses the thread boundary. */
export interface WireTensor {
  type: ort.Tensor.Type;
  data: ort.Tensor.DataType;
  dims: readonly number[];
}

/** Messages to the worker. */
export type WorkerRequest =
  { id: number; op: 'run'; feeds: Record<string, WireTensor>; fetches: string[] } | { id: number; op: 'release' };

/** What the worker reports once its session exists. */
export interface WorkerReady {
  provider: ExecutionProvider;
  inputNames: readonly string[];
  outputNames: readonly string[];
  inputMetadata: readonly ort.InferenceSession.ValueMetadata[];
}
