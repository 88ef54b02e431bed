/**
 * Worker-thread host for one onnxruntime session (see worker-session.ts): onnxruntime-node runs inference on the
 * calling JS thread, so hosting the session here keeps the service's event loop free while a model runs.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { createSession, type SessionOptions } from './session.js';
import type { WireTensor, WorkerReady, WorkerRequest } from './session-wire.js';

const port = parentPort!;
const { model, options } = workerData as { model: string | Uint8Array; options: SessionOptions };

/** Niceness of inference threads above the service's event loop. */
const INFERENCE_NICENESS = 10;

/**
 * Lowers this thread's scheduling priority before the session exists, so that onnxruntime's intra-op threads, which
 * inherit it, yield the cores to the event loop: on a small machine a model run then never delays request handling
 * (a status poll answered while a batch job embeds), it only waits for idle cores. Linux only (a thread's id is its own
 * process id there); elsewhere, or where it is refused, the session runs at normal priority.
 */
function lowerThreadPriority(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    setPriority(threadId, Math.min(19, getPriority(threadId) + INFERENCE_NICENESS));
  } catch {
    // not Linux, or not permitted: normal priority
  }
}

lowerThreadPriority();

try {
  const { session, provider } = await createSession(model, { ...options, isolation: 'main' });
  port.on('message', async (request: WorkerRequest) => {
    try {
      if (request.op === 'release') {
        await session.release();
        port.postMessage({ id: request.id, ok: true });
        return;
      }
      const feeds = Object.fromEntries(
        Object.entries(request.feeds).map(([name, t]) => [name, new ort.Tensor(t.type, t.data as never, t.dims)]),
      );
      const outputs = await session.run(feeds, request.fetches);
      const wire: Record<string, WireTensor> = {};
      const transfer: ArrayBuffer[] = [];
      for (const [name, tensor] of Object.entries(outputs)) {
        const data = tensor.data as ort.Tensor.DataType;
        wire[name] = { type: tensor.type, data, dims: tensor.dims };
        if (typeof data !== 'string' && !Array.isArray(data) && data.buffer instanceof ArrayBuffer) {
          transfer.push(data.buffer);
        }
      }
      try {
        port.postMessage({ id: request.id, ok: true, outputs: wire }, transfer);
      } catch {
        // Output memory onnxruntime owns cannot always be transferred; a copy always works.
        port.postMessage({ id: request.id, ok: true, outputs: wire });
      }
    } catch (error) {
      port.postMessage({ id: request.id, ok: false, error: (error as Error).message });
    }
  });
  const ready: WorkerReady = {
    provider,
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    inputMetadata: session.inputMetadata,
  };
  port.postMessage({ id: 0, ok: true, ready });
} catch (error) {
  port.postMessage({ id: 0, ok: false, error: (error as Error).message, name: (error as Error).name });
}
