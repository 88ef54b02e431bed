import { spawn, type ChildProcess } from 'node:child_process';
import type { StreamSource } from '../runs/stream-source.js';
import { JpegSplitter, OversizedFrameError } from './jpeg-splitter.js';

/** One sampled frame: a JPEG as ffmpeg encoded it, and when it was read. */
export interface SampledFrame {
  jpeg: Buffer;
  /** When the frame came out of ffmpeg, ms since the epoch (the worker's clock). */
  readAt: number;
}

/** How a run's stream is opened and read. */
export interface FrameSourceOptions {
  ffmpegPath: string;
  source: StreamSource;
  /** Frames per second kept; 0: every frame. */
  frameRate: number;
  width?: number;
  height?: number;
  /** RTSP socket I/O time-out: connecting and every read (ffmpeg's -stimeout). */
  ioTimeoutMs: number;
  /** No frame for this long (after the first) ends the session: a stream that stalls without closing. */
  idleTimeoutMs: number;
  /** Frames waiting to be taken; when full the oldest is dropped (and counted), so a slow captioner sees fresh frames. */
  queueFrames: number;
  maxFrameBytes: number;
  clock: () => number;
}

/** The ffmpeg arguments that read `options.source` as MJPEG frames on stdout. Never a shell: one argument each. */
export function frameSourceArgs(options: Omit<FrameSourceOptions, 'ffmpegPath' | 'clock'>): string[] {
  const input =
    options.source.kind === 'rtsp'
      ? ['-rtsp_transport', 'tcp', '-stimeout', String(options.ioTimeoutMs * 1000), '-i', options.source.url.href]
      : ['-re', '-stream_loop', '-1', '-i', options.source.path];
  const filters: string[] = [];
  if (options.frameRate > 0) filters.push(`fps=${options.frameRate}`);
  if (options.width || options.height) filters.push(`scale=${options.width ?? -2}:${options.height ?? -2}`);
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    ...input,
    '-an',
    '-sn',
    '-dn',
    ...(filters.length > 0 ? ['-vf', filters.join(',')] : []),
    '-f',
    'image2pipe',
    '-c:v',
    'mjpeg',
    '-q:v',
    '4',
    'pipe:1',
  ];
}

/** Why a session ended. */
export interface SessionEnd {
  /** A short reason for status and logs (ffmpeg's last error line, the stall, an oversized frame). */
  reason: string;
  /** Frames ffmpeg produced in the session (taken or dropped). */
  frames: number;
}

/**
 * One ffmpeg process reading the stream: frames are taken with `next()` (undefined once the session ended, `ended`
 * then says why). `close()` kills ffmpeg. Secrets in the source (an RTSP password) never reach `ended.reason`.
 */
export class FrameSession {
  private readonly child: ChildProcess;
  private readonly queue: SampledFrame[] = [];
  private waiter: (() => void) | undefined;
  private stderr = '';
  private idleTimer: NodeJS.Timeout | undefined;
  private failure: string | undefined;
  private received = 0;
  /** Frames dropped because the queue was full. */
  dropped = 0;
  ended: SessionEnd | undefined;
  readonly exited: Promise<void>;

  constructor(private readonly options: FrameSourceOptions) {
    const splitter = new JpegSplitter(options.maxFrameBytes);
    this.child = spawn(options.ffmpegPath, frameSourceArgs(options), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (chunk: Buffer) => {
      let frames: Buffer[];
      try {
        frames = splitter.push(chunk);
      } catch (error) {
        if (!(error instanceof OversizedFrameError)) throw error;
        this.fail(error.message);
        return;
      }
      for (const jpeg of frames) this.offer({ jpeg, readAt: options.clock() });
    });
    this.child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      this.stderr = (this.stderr + text).slice(-4096);
    });
    this.exited = new Promise<void>((resolve) => {
      const done = (why?: string) => {
        clearTimeout(this.idleTimer);
        this.ended ??= { reason: this.failure ?? why ?? this.lastError(), frames: this.received };
        this.wake();
        resolve();
      };
      this.child.once('error', (error) => done(`ffmpeg could not start: ${error.message}`));
      this.child.once('close', () => done());
    });
  }

  private lastError(): string {
    const lines = this.stderr.trim().split('\n').filter(Boolean);
    const last = lines[lines.length - 1] ?? 'the stream ended';
    return redactSecrets(last, this.options.source).slice(0, 512);
  }

  private offer(frame: SampledFrame): void {
    this.received++;
    this.queue.push(frame);
    if (this.queue.length > this.options.queueFrames) {
      this.queue.shift();
      this.dropped++;
    }
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(
      () => this.fail(`no frame for ${Math.round(this.options.idleTimeoutMs / 100) / 10} s`),
      this.options.idleTimeoutMs,
    );
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  private fail(reason: string): void {
    this.failure ??= reason;
    this.child.kill('SIGKILL');
  }

  /** The next frame; undefined once the session ended and every frame was taken. */
  async next(): Promise<SampledFrame | undefined> {
    for (;;) {
      const frame = this.queue.shift();
      if (frame) return frame;
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  /** Kills ffmpeg and waits for it to be gone. */
  async close(): Promise<void> {
    this.failure ??= 'stopped';
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** `text` without the source's password (ffmpeg prints URLs in its errors). */
export function redactSecrets(text: string, source: StreamSource): string {
  if (source.kind !== 'rtsp' || !source.url.password) return text;
  const password = source.url.password;
  return text.split(password).join('***').split(decodeURIComponent(password)).join('***');
}
