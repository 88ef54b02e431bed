import { stat } from 'node:fs/promises';
import { resolveFfmpegPaths, type FfmpegPaths } from './ffmpeg-paths.js';
import { runProcess, stderrTail } from './run-process.js';

/** What the pipeline needs to know about a video before decoding it. Width/height are as displayed (rotation applied). */
export interface VideoInfo {
  fps: number;
  totalFrames: number;
  durationSeconds: number;
  width: number;
  height: number;
  codec: string;
}

/** Thrown when a file is missing, not a video, or too damaged for ffprobe to read its video stream. */
export class VideoProbeError extends Error {
  constructor(
    readonly filePath: string,
    reason: string,
  ) {
    super(`cannot read video ${filePath}: ${reason}`);
    this.name = 'VideoProbeError';
  }
}

interface ProbeStream {
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  nb_frames?: string;
  duration?: string;
  tags?: Record<string, string>;
  side_data_list?: Array<{ rotation?: number }>;
}

interface ProbeOutput {
  streams?: ProbeStream[];
  format?: { duration?: string };
}

function parseRate(rate: string | undefined): number {
  if (!rate) return 0;
  const [num, den] = rate.split('/').map(Number);
  const value = den === undefined ? num : den === 0 ? 0 : num / den;
  return Number.isFinite(value) && value > 0 ? value : 0;
}

function positive(value: string | number | undefined): number {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

function rotation(stream: ProbeStream): number {
  const fromSideData = stream.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation;
  const degrees = fromSideData ?? Number(stream.tags?.rotate ?? 0);
  return ((Math.round(degrees) % 360) + 360) % 360;
}

/** Interprets ffprobe's JSON (`-show_streams -show_format`, first video stream) as VideoInfo. */
export function parseProbeOutput(filePath: string, json: string): VideoInfo {
  let parsed: ProbeOutput;
  try {
    parsed = JSON.parse(json) as ProbeOutput;
  } catch {
    throw new VideoProbeError(filePath, 'ffprobe output is not JSON');
  }
  const stream = parsed.streams?.[0];
  if (!stream || !stream.width || !stream.height) throw new VideoProbeError(filePath, 'no video stream');
  const fps = parseRate(stream.avg_frame_rate) || parseRate(stream.r_frame_rate);
  if (!fps) throw new VideoProbeError(filePath, 'frame rate unknown');
  const durationSeconds = positive(stream.duration) || positive(parsed.format?.duration);
  // MP4 records the frame count in the sample table; estimate from duration only when a container lacks it.
  const totalFrames = positive(stream.nb_frames) || Math.round(durationSeconds * fps);
  if (!totalFrames) throw new VideoProbeError(filePath, 'video has no frames');
  // ffmpeg auto-rotates decoded frames, so report the displayed size.
  const quarterTurn = rotation(stream) % 180 === 90;
  return {
    fps,
    totalFrames,
    durationSeconds: durationSeconds || totalFrames / fps,
    width: quarterTurn ? stream.height : stream.width,
    height: quarterTurn ? stream.width : stream.height,
    codec: stream.codec_name ?? 'unknown',
  };
}

/** ffprobe arguments that describe the first video stream and the container of `input` (path or URL) as JSON. */
export function probeArgs(input: string): string[] {
  return ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_format', '-select_streams', 'v:0', input];
}

/** Reads a local video's frame rate, frame count, duration, size and codec with ffprobe. */
export async function probeVideo(
  filePath: string,
  options: { paths?: Partial<FfmpegPaths>; signal?: AbortSignal } = {},
): Promise<VideoInfo> {
  // ffprobe's "No such file" is less clear than the filesystem's own error.
  await stat(filePath).catch((error: NodeJS.ErrnoException) => {
    throw new VideoProbeError(filePath, error.code === 'ENOENT' ? 'file not found' : error.message);
  });
  const { ffprobe } = resolveFfmpegPaths(options.paths);
  const result = await runProcess(ffprobe, probeArgs(filePath), options.signal);
  if (result.code !== 0) {
    throw new VideoProbeError(filePath, stderrTail(result.stderr, 500) || `ffprobe exited with ${result.code}`);
  }
  return parseProbeOutput(filePath, result.stdout);
}
