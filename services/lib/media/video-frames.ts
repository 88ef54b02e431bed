import { Worker } from 'node:worker_threads';
import { linkAbort } from '../abort/index.js';
import type { RgbImage } from '../inference/roles.js';
import { resolveFfmpegPaths, type FfmpegPaths } from './ffmpeg-paths.js';
import { probeVideo, type VideoInfo } from './probe-video.js';
import { stderrTail } from './run-process.js';

/** One decoded frame: its index in the source video, its time, and its pixels. */
export interface VideoFrame {
  /** Index of the frame in the source video (0-based), i.e. a multiple of the interval. */
  frameId: number;
  /** frameId / fps: seconds from the start of the video. */
  timestampSeconds: number;
  image: RgbImage;
}

/** Options of extractFrames. */
export interface ExtractFramesOptions {
  /** Keep every Nth frame (1 = all), starting with frame 0. */
  every: number;
  /** Result of probeVideo when the caller already has it (saves a second ffprobe run). */
  info?: VideoInfo;
  /** Output size; default the video's displayed size. */
  scale?: { width: number; height: number };
  /** Decoded frames that may wait for the consumer (default 3); ffmpeg pauses beyond that. */
  aheadFrames?: number;
  /**
   * Niceness (0–19) for ffmpeg: above 0 decoding yields the CPU to model inference and fills the gaps between
   * model calls instead of slowing them. Default 0.
   */
  niceness?: number;
  /** Decoder threads for ffmpeg (`-threads`); default: ffmpeg's choice. */
  threads?: number;
  paths?: Partial<FfmpegPaths>;
  /** Aborting kills ffmpeg; the iterator then throws the signal's reason. */
  signal?: AbortSignal;
}

/** Thrown when ffmpeg fails while decoding; the message carries the tail of its stderr. */
export class FrameDecodeError extends Error {
  constructor(
    readonly filePath: string,
    reason: string,
  ) {
    super(`decoding ${filePath} failed: ${reason}`);
    this.name = 'FrameDecodeError';
  }
}

/** How long the reader thread gets to reap ffmpeg after a stop before it is terminated. */
const STOP_GRACE_MS = 5000;

/** Decoded frames allowed to wait for the consumer by default. */
const DEFAULT_AHEAD_FRAMES = 3;

/** ffmpeg arguments that decode every Nth frame of `filePath` to packed rgb24 on stdout. */
export function frameExtractionArgs(
  filePath: string,
  every: number,
  size: { width: number; height: number },
  threads?: number,
): string[] {
  const filters = [];
  // select drops the other frames right after decoding, so only kept frames are scaled and converted to RGB.
  if (every > 1) filters.push(`select='not(mod(n\\,${every}))'`);
  // An explicit scale pins the frame size we slice stdout by, whatever rotation or odd size the stream has.
  filters.push(`scale=${size.width}:${size.height}`);
  return [
    '-nostdin',
    '-hide_banner',
    '-loglevel',
    'error',
    ...(threads ? ['-threads', String(threads)] : []),
    '-i',
    filePath,
    '-map',
    '0:v:0',
    '-an',
    '-sn',
    '-dn',
    '-vf',
    filters.join(','),
    // Passthrough: one output frame per selected frame, no duplication or dropping to fit a frame rate.
    '-vsync',
    '0',
    '-pix_fmt',
    'rgb24',
    '-f',
    'rawvideo',
    'pipe:1',
  ];
}

/** Messages from frame-reader.worker.mjs. */
type ReaderMessage =
  | { type: 'pid'; pid: number }
  | { type: 'frame'; data: ArrayBuffer }
  | {
      type: 'end';
      code: number | null;
      signal: NodeJS.Signals | null;
      error?: string;
      stderr: string;
      partial: boolean;
    };

const READER_URL = new URL('./frame-reader.worker.mjs', import.meta.url);

/**
 * Decodes every `every`-th frame of a local video as an async stream. ffmpeg writes raw RGB to a pipe drained by a
 * worker thread (so decoding continues while the main thread runs a model); at most `aheadFrames` decoded frames wait
 * for the consumer, then ffmpeg is paused by the full pipe (memory stays bounded whatever the video length). Breaking
 * out of the loop or aborting kills ffmpeg. A failing ffmpeg raises FrameDecodeError with its stderr tail.
 */
export async function* extractFrames(filePath: string, options: ExtractFramesOptions): AsyncGenerator<VideoFrame> {
  const every = Math.floor(options.every);
  if (!(every >= 1)) throw new RangeError(`frame interval must be a positive integer, got ${options.every}`);
  options.signal?.throwIfAborted();
  // Linked, not listened to: the caller's signal may be long-lived and shared by many decodes in flight.
  const stopping = new AbortController();
  const unlink = options.signal && linkAbort(options.signal, stopping);
  try {
    yield* decodeFrames(filePath, every, options, stopping.signal);
  } finally {
    unlink?.();
  }
}

/** extractFrames' decoding, stopped by `signal` (the run's own, linked to the caller's). */
async function* decodeFrames(
  filePath: string,
  every: number,
  options: ExtractFramesOptions,
  signal: AbortSignal,
): AsyncGenerator<VideoFrame> {
  const info = options.info ?? (await probeVideo(filePath, { paths: options.paths, signal }));
  const size = options.scale ?? { width: info.width, height: info.height };
  const { ffmpeg } = resolveFfmpegPaths(options.paths);

  const worker = new Worker(READER_URL, {
    workerData: {
      ffmpeg,
      args: frameExtractionArgs(filePath, every, size, options.threads),
      frameBytes: size.width * size.height * 3,
      credits: Math.max(1, options.aheadFrames ?? DEFAULT_AHEAD_FRAMES),
      niceness: Math.min(19, Math.max(0, Math.floor(options.niceness ?? 0))),
    },
  });
  const inbox: ArrayBuffer[] = [];
  let pid: number | undefined;
  let end: Extract<ReaderMessage, { type: 'end' }> | undefined;
  let failure: Error | undefined;
  let workerGone = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  worker.on('message', (message: ReaderMessage) => {
    if (message.type === 'pid') pid = message.pid;
    else if (message.type === 'frame') inbox.push(message.data);
    else end = message;
    notify();
  });
  worker.once('error', (error) => {
    failure = error;
    notify();
  });
  worker.once('exit', () => {
    workerGone = true;
    notify();
  });
  const killFfmpeg = () => {
    // Killing from here too: a worker that is terminated does not take its child process with it.
    if (pid !== undefined && !end) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  const onAbort = () => {
    killFfmpeg();
    notify();
  };
  signal.addEventListener('abort', onAbort, { once: true });

  try {
    for (let index = 0; ;) {
      while (inbox.length === 0 && !end && !failure && !workerGone && !signal.aborted) {
        await new Promise<void>((resolve) => (wake = resolve));
      }
      signal.throwIfAborted();
      const data = inbox.shift();
      if (data) {
        worker.postMessage({ type: 'credit', n: 1 });
        const frameId = index * every;
        index++;
        yield { frameId, timestampSeconds: frameId / info.fps, image: { data: new Uint8Array(data), ...size } };
        continue;
      }
      if (failure) throw new FrameDecodeError(filePath, `frame reader failed: ${failure.message}`);
      if (!end) throw new FrameDecodeError(filePath, 'frame reader stopped unexpectedly');
      if (end.error) throw new FrameDecodeError(filePath, `cannot run ffmpeg: ${end.error}`);
      if (end.code !== 0) {
        throw new FrameDecodeError(filePath, stderrTail(end.stderr) || `ffmpeg exited with ${end.code ?? end.signal}`);
      }
      if (end.partial) throw new FrameDecodeError(filePath, 'ffmpeg output ended inside a frame');
      return;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    killFfmpeg();
    if (!workerGone) {
      worker.postMessage({ type: 'stop' });
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      const timer = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
  }
}
