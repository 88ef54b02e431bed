import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import type { ExecutionProvider } from './roles.js';
import type { WireTensor, WorkerReady, WorkerRequest } from './session-wire.js';

/** The part of an onnxruntime session the role classes use; met by in-process and worker-hosted sessions alike. */
export interface ModelSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputMetadata: readonly ort.InferenceSession.ValueMetadata[];
  run(feeds: Record<string, ort.Tensor>, fetches: string[]): Promise<Record<string, ort.Tensor>>;
  release(): Promise<void>;
}

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

type Reply =
  | { id: number; ok: true; ready?: WorkerReady; outputs?: Record<string, WireTensor> }
  | { id: number; ok: false; error: string; name?: string };

/** A session living in its own worker thread; runs are posted to it and answered in order of completion. */
class WorkerSession implements ModelSession {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  private exitError?: Error;

  constructor(
    private readonly worker: Worker,
    readonly ready: WorkerReady,
  ) {
    this.inputNames = ready.inputNames;
    this.outputNames = ready.outputNames;
    this.inputMetadata = ready.inputMetadata;
    worker.on('message', (reply: Reply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      this.updateRef();
      waiter.resolve(reply);
    });
    const fail = (error: Error) => {
      this.exitError = error;
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`inference worker exited (code ${code})`)));
    this.updateRef();
  }

  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputMetadata: readonly ort.InferenceSession.ValueMetadata[];

  async run(feeds: Record<string, ort.Tensor>, fetches: string[]): Promise<Record<string, ort.Tensor>> {
    const wire: Record<string, WireTensor> = {};
    for (const [name, tensor] of Object.entries(feeds)) {
      // Copied, not transferred: callers reuse their input buffers (see InputBufferPool).
      wire[name] = { type: tensor.type, data: tensor.data as ort.Tensor.DataType, dims: tensor.dims };
    }
    const reply = await this.request({ op: 'run', feeds: wire, fetches });
    const outputs: Record<string, ort.Tensor> = {};
    for (const [name, t] of Object.entries(reply.outputs ?? {})) {
      outputs[name] = new ort.Tensor(t.type, t.data as never, t.dims);
    }
    return outputs;
  }

  async release(): Promise<void> {
    if (!this.exitError) await this.request({ op: 'release' }).catch(() => undefined);
    await this.worker.terminate();
  }

  private request(message: WithoutId<WorkerRequest>): Promise<Extract<Reply, { ok: true }>> {
    if (this.exitError) return Promise.reject(this.exitError);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        resolve: (reply) => (reply.ok ? resolve(reply) : reject(new Error(reply.error))),
        reject,
      });
      this.updateRef();
      this.worker.postMessage({ ...message, id } as WorkerRequest);
    });
  }

  /** An idle worker must not keep the process alive; one with runs in flight must. */
  private updateRef(): void {
    if (this.pending.size > 0) this.worker.ref();
    else this.worker.unref();
  }
}

/**
 * The worker's entry module. Compiled JavaScript loads directly. From TypeScript sources (tsx, jest) a small bootstrap
 * loads it through tsx's API, since Node 20 does not apply `--import` loader hooks inside worker threads.
 */
function workerEntry(): URL {
  const extension = path.extname(fileURLToPath(import.meta.url));
  const entry = new URL(`./session-worker${extension}`, import.meta.url);
  if (extension !== '.ts') return entry;
  // The ESM build of tsx's API (its CommonJS build registers hooks by a path that does not resolve from a worker).
  const tsxApi =
    typeof import.meta.resolve === 'function'
      ? import.meta.resolve('tsx/esm/api')
      : pathToFileURL(
          createRequire(import.meta.url)
            .resolve('tsx/esm/api')
            .replace(/\.cjs$/, '.mjs'),
        ).href;
  const bootstrap = `import { tsImport } from ${JSON.stringify(tsxApi)};\nawait tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(entry.href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`);
}

/** Starts a worker thread that creates the session there; resolves once it is ready (or rejects with its error). */
export async function createWorkerSession(
  model: string | Uint8Array,
  options: object,
): Promise<{ session: ModelSession; provider: ExecutionProvider; errorName?: string }> {
  const worker = new Worker(workerEntry(), { workerData: { model, options } });
  const first = await new Promise<Reply>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`inference worker exited before its session was ready (${code})`)));
  });
  if (!first.ok) {
    await worker.terminate();
    const error = new Error(first.error);
    if (first.name) error.name = first.name;
    throw error;
  }
  const session = new WorkerSession(worker, first.ready!);
  return { session, provider: first.ready!.provider };
}
