// Runs ffmpeg and cuts its raw RGB output into frames on a worker thread. Why a thread: onnxruntime-node runs a model
// synchronously on the main thread, so a pipe read there advances one 64 KB chunk per model call and ffmpeg (blocked
// on the full pipe) cannot decode ahead. Here the pipe is drained independently; whole frames are transferred to the
// main thread, at most `credits` ahead of the consumer (backpressure: the pipe is paused when no credit is left).
// Plain JavaScript so it loads in any runtime (node, tsx, jest) without a TypeScript loader.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

const { ffmpeg, args, frameBytes, niceness } = workerData;
let credits = workerData.credits;
const ready = [];
let frame = new Uint8Array(frameBytes);
let filled = 0;
let stderr = '';
let exit;
let finished = false;

const child = spawn(ffmpeg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
parentPort.postMessage({ type: 'pid', pid: child.pid });
if (niceness && child.pid !== undefined) {
  try {
    setPriority(child.pid, niceness);
  } catch {
    // Not allowed or already exited: decoding at normal priority is still correct.
  }
}
child.stderr.setEncoding('utf8');
child.stderr.on('data', (text) => {
  stderr = (stderr + text).slice(-8192);
});

function finish() {
  if (finished || !exit || ready.length > 0) return;
  finished = true;
  parentPort.postMessage({ type: 'end', ...exit, stderr, partial: filled !== 0 });
  parentPort.close();
}

function deliver() {
  while (credits > 0 && ready.length > 0) {
    const next = ready.shift();
    credits--;
    parentPort.postMessage({ type: 'frame', data: next.buffer }, [next.buffer]);
  }
  if (ready.length === 0 && child.stdout.isPaused()) child.stdout.resume();
  finish();
}

child.stdout.on('data', (chunk) => {
  let offset = 0;
  while (offset < chunk.length) {
    const take = Math.min(frameBytes - filled, chunk.length - offset);
    frame.set(chunk.subarray(offset, offset + take), filled);
    filled += take;
    offset += take;
    if (filled === frameBytes) {
      ready.push(frame);
      frame = new Uint8Array(frameBytes);
      filled = 0;
    }
  }
  deliver();
  if (ready.length > 0) child.stdout.pause();
});

child.once('error', (error) => {
  exit = { code: null, signal: null, error: error.message };
  ready.length = 0;
  finish();
});
child.once('close', (code, signal) => {
  exit ??= { code, signal };
  finish();
});

parentPort.on('message', (message) => {
  if (message.type === 'credit') {
    credits += message.n;
    deliver();
  } else if (message.type === 'stop') {
    // The thread ends once the killed child is reaped (its handle is the last thing keeping the loop alive), so no
    // zombie is left behind.
    finished = true;
    child.kill('SIGKILL');
    child.stdout.destroy();
    child.stderr.destroy();
    parentPort.close();
  }
});
