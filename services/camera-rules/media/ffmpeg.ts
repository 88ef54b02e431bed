import { execFile } from 'node:child_process';
import { bundledFfmpegPaths } from '../../lib/media/index.js';

/** Largest output kept from one ffmpeg run (a snapshot or a short clip). */
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

/** Runs the bundled ffmpeg with `args` (output to `pipe:1`) and returns what it wrote; rejects with its last line. */
export function runFfmpeg(args: string[], signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      bundledFfmpegPaths().ffmpeg,
      ['-hide_banner', '-loglevel', 'error', '-nostdin', ...args],
      { encoding: 'buffer', maxBuffer: MAX_OUTPUT_BYTES, signal },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const last = stderr.toString('utf8').trim().split('\n').pop();
        reject(new Error(`ffmpeg failed${last ? `: ${last}` : ''}`));
      },
    );
  });
}

/** The first frame of a video file as a JPEG. */
export function firstFrameJpeg(file: string, signal?: AbortSignal): Promise<Buffer> {
  return runFfmpeg(['-i', file, '-frames:v', '1', '-f', 'image2', '-c:v', 'mjpeg', 'pipe:1'], signal);
}

/** The frame `offset` seconds into a video file as a JPEG (the first frame for 0). */
export function frameJpeg(file: string, offset: number, signal?: AbortSignal): Promise<Buffer> {
  if (offset <= 0) return firstFrameJpeg(file, signal);
  return runFfmpeg(
    ['-ss', String(offset), '-i', file, '-frames:v', '1', '-f', 'image2', '-c:v', 'mjpeg', 'pipe:1'],
    signal,
  );
}
