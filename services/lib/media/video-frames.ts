import { spawn } from 'node:child_process';
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

const STDERR_KEEP = 8192;

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

/**
 * Decodes every `every`-th frame of a local video as an async stream. ffmpeg writes raw RGB to a pipe and is paused
 * by the pipe when the consumer is slower (only one frame plus the pipe buffer is in memory). Breaking out of the
 * loop or aborting kills ffmpeg. A failing ffmpeg raises FrameDecodeError with its stderr tail.
 */
export async function* extractFrames(filePath: string, options: ExtractFramesOptions): AsyncGenerator<VideoFrame> {
  const every = Math.floor(options.every);
  if (!(every >= 1)) throw new RangeError(`frame interval must be a positive integer, got ${options.every}`);
  const { signal } = options;
  signal?.throwIfAborted();
  const info = options.info ?? (await probeVideo(filePath, { paths: options.paths, signal }));
  const size = options.scale ?? { width: info.width, height: info.height };
  const frameBytes = size.width * size.height * 3;
  const { ffmpeg } = resolveFfmpegPaths(options.paths);

  const child = spawn(ffmpeg, frameExtractionArgs(filePath, every, size, options.threads), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    stderr = (stderr + text).slice(-STDERR_KEEP);
  });
  const exited = new Promise<{ code: number | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, error }));
    child.once('close', (code) => resolve({ code }));
  });
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  signal?.addEventListener('abort', kill, { once: true });

  try {
    let frame = new Uint8Array(frameBytes);
    let filled = 0;
    let index = 0;
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      let offset = 0;
      while (offset < chunk.length) {
        const take = Math.min(frameBytes - filled, chunk.length - offset);
        frame.set(chunk.subarray(offset, offset + take), filled);
        filled += take;
        offset += take;
        if (filled === frameBytes) {
          signal?.throwIfAborted();
          const frameId = index * every;
          yield { frameId, timestampSeconds: frameId / info.fps, image: { data: frame, ...size } };
          index++;
          frame = new Uint8Array(frameBytes);
          filled = 0;
        }
      }
    }
    const { code, error } = await exited;
    signal?.throwIfAborted();
    if (error) throw new FrameDecodeError(filePath, `cannot run ffmpeg: ${error.message}`);
    if (code !== 0) throw new FrameDecodeError(filePath, stderrTail(stderr) || `ffmpeg exited with ${code}`);
    if (filled !== 0) throw new FrameDecodeError(filePath, 'ffmpeg output ended inside a frame');
  } finally {
    signal?.removeEventListener('abort', kill);
    kill();
    child.stdout.destroy();
  }
}
