import { createHash } from 'node:crypto';
import { Counter } from 'prom-client';
import sharp from 'sharp';
import {
  parseProbeOutput,
  probeArgs,
  resolveFfmpegPaths,
  type FfmpegPaths,
  type VideoInfo,
} from '../../lib/media/index.js';
import { StorageUnavailableError } from '../../lib/storage/index.js';
import type { FrameLimits } from '../config.js';
import { CoalescingCache, type CacheOutcome } from './coalescing-cache.js';
import { jpegFrameArgs, withoutLocation } from './ffmpeg-frame.js';
import type { FrameMedia } from './frame-media.js';
import { FrameProcesses } from './frame-processes.js';

/** Widest frame the endpoint renders; also the default width's cap (a 4K video answers 1920 px wide). */
export const MAX_FRAME_WIDTH = 1920;
/** Narrowest width a client may ask for. */
export const MIN_FRAME_WIDTH = 16;

/** One rendered frame: JPEG bytes and their strong ETag. */
export interface RenderedFrame {
  jpeg: Buffer;
  etag: string;
}

/** A request for the frame shown at `t` seconds, `width` pixels wide (default: the media's, at most MAX_FRAME_WIDTH). */
export interface FrameRequest {
  t: number;
  width?: number;
}

/** `t` lies after the video's end (400). */
export class PastEndError extends Error {
  constructor(
    readonly t: number,
    readonly durationSeconds: number,
  ) {
    super(`t=${t} is past the end of the video (${Number(durationSeconds.toFixed(3))} s)`);
    this.name = 'PastEndError';
  }
}

/** The media could not be decoded at that moment (400); the message holds no path or URL. */
export class UndecodableFrameError extends Error {
  constructor(readonly detail: string) {
    super('The media could not be decoded');
    this.name = 'UndecodableFrameError';
  }
}

/** Rendering took longer than the limit; its process was killed (504). */
export class FrameTimeoutError extends Error {
  constructor(readonly limitMs: number) {
    super(`Frame extraction timed out after ${limitMs / 1000} s`);
    this.name = 'FrameTimeoutError';
  }
}

/** Largest JPEG accepted from ffmpeg (a 1920-wide frame at q 3 is far below). */
const MAX_JPEG_BYTES = 16 * 1024 * 1024;
/** Probe results kept (small: a few numbers per media item). */
const PROBE_ENTRIES = 1000;
/**
 * Words in ffmpeg's stderr that mean the storage behind a URL failed, not the media: no connection, or an HTTP error
 * answer (ffmpeg writes `Server returned 5XX Server Error reply`, `Server returned 403 Forbidden (access denied)`).
 */
const REMOTE_FAILURE = /Connection refused|Connection timed out|Server returned|Input\/output error|Network is/i;

const etagOf = (jpeg: Buffer) => `"${createHash('sha256').update(jpeg).digest('base64url').slice(0, 32)}"`;

/**
 * Renders the frame of a media item at a moment as a JPEG: ffmpeg with input seeking for videos (local path or
 * signed URL, never a whole-file read), sharp for images (EXIF orientation applied; BMP through ffmpeg). Results and
 * probes are cached with bounds and keyed by the media's identity, identical requests in flight share one process,
 * processes are bounded in number and time, and one is killed when every request waiting for it has gone.
 */
export class FrameService {
  /** Processes spawned, by program: a cache hit spawns none. */
  readonly spawned = new Counter({
    name: 'dataprep_frame_processes_spawned_total',
    help: 'ffmpeg and ffprobe processes started by GET /media/frame',
    labelNames: ['program'] as const,
    registers: [],
  });
  /** Frame requests by how they were served. */
  readonly requests = new Counter({
    name: 'dataprep_frame_requests_total',
    help: 'GET /media/frame renders by cache outcome (hit, miss, joined: shared a render already under way)',
    labelNames: ['cache'] as const,
    registers: [],
  });
  readonly processes: FrameProcesses;
  private readonly frames: CoalescingCache<RenderedFrame>;
  private readonly probes = new CoalescingCache<VideoInfo>({ maxEntries: PROBE_ENTRIES });
  private readonly paths: FfmpegPaths;

  constructor(
    private readonly limits: FrameLimits,
    paths?: Partial<FfmpegPaths>,
  ) {
    this.paths = resolveFfmpegPaths(paths);
    this.processes = new FrameProcesses(limits.concurrency, this.spawned);
    this.frames = new CoalescingCache<RenderedFrame>({
      maxEntries: limits.cacheEntries,
      maxBytes: limits.cacheBytes,
      sizeOf: (frame) => frame.jpeg.length,
    });
  }

  /** The JPEG of `media` at `request.t`; rejects with PastEndError, UndecodableFrameError or FrameTimeoutError. */
  async render(media: FrameMedia, request: FrameRequest, signal: AbortSignal): Promise<RenderedFrame> {
    const width = request.width;
    if (media.kind === 'image') {
      // An image is one moment: every t shows it.
      return this.cached(`${media.identity}|image|${width ?? 'own'}`, signal, (deadline) =>
        this.renderImage(media, width, deadline),
      );
    }
    const info = await this.withDeadline(signal, (deadline) =>
      this.probes.get(media.identity, (inner) => this.probe(media, inner), deadline).then((got) => got.value),
    );
    if (request.t > info.durationSeconds) throw new PastEndError(request.t, info.durationSeconds);
    // The frame on screen at t: the last one starting at or before it (t up to the end shows the last frame).
    const index = Math.min(info.totalFrames - 1, Math.floor(request.t * info.fps + 1e-6));
    const outWidth = width ?? (info.width > MAX_FRAME_WIDTH ? MAX_FRAME_WIDTH : undefined);
    return this.cached(`${media.identity}|frame ${index}|${outWidth ?? 'own'}`, signal, (deadline) =>
      this.renderVideoFrame(media, index, info.fps, outWidth, deadline),
    );
  }

  /** Entries and bytes held by the frame cache. */
  get cacheStats() {
    return this.frames.stats;
  }

  private async cached(
    key: string,
    signal: AbortSignal,
    produce: (signal: AbortSignal) => Promise<RenderedFrame>,
  ): Promise<RenderedFrame> {
    const { value, outcome } = await this.frames.get(key, (shared) => this.withDeadline(shared, produce), signal);
    this.count(outcome);
    return value;
  }

  private count(outcome: CacheOutcome): void {
    this.requests.inc({ cache: outcome });
  }

  /** Runs `work` with a signal that also aborts at the time limit; the limit's expiry becomes FrameTimeoutError. */
  private async withDeadline<T>(signal: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const timer = AbortSignal.timeout(this.limits.timeoutMs);
    try {
      return await work(AbortSignal.any([signal, timer]));
    } catch (error) {
      if (timer.aborted && !signal.aborted) throw new FrameTimeoutError(this.limits.timeoutMs);
      throw error;
    }
  }

  private async probe(media: FrameMedia, signal: AbortSignal): Promise<VideoInfo> {
    return this.processes.inSlot(signal, async () => {
      const location = await media.location(this.urlLifetimeSeconds());
      const out = await this.processes.run(this.paths.ffprobe, probeArgs(location), {
        signal,
        maxStdout: 1024 * 1024,
      });
      if (out.code !== 0) throw failureOf(out.stderr, location);
      try {
        return parseProbeOutput(media.filename, out.stdout.toString('utf8'));
      } catch (error) {
        throw new UndecodableFrameError((error as Error).message);
      }
    });
  }

  private renderVideoFrame(
    media: FrameMedia,
    index: number,
    fps: number,
    width: number | undefined,
    signal: AbortSignal,
  ): Promise<RenderedFrame> {
    // A quarter frame before the frame's own time: the first frame at or after the seek point is exactly this one.
    const seek = index === 0 ? 0 : (index - 0.25) / fps;
    return this.processes.inSlot(signal, async () => {
      const location = await media.location(this.urlLifetimeSeconds());
      return this.runFfmpeg(jpegFrameArgs(location, seek, width), location, signal);
    });
  }

  private renderImage(media: FrameMedia, width: number | undefined, signal: AbortSignal): Promise<RenderedFrame> {
    return this.processes.inSlot(signal, async () => {
      if (/\.bmp$/i.test(media.filename)) {
        // libvips reads no BMP: ffmpeg decodes it, as the ingest pipeline does.
        const location = await media.location(this.urlLifetimeSeconds());
        return this.runFfmpeg(jpegFrameArgs(location, 0, width), location, signal);
      }
      const bytes = await media.bytes();
      signal.throwIfAborted();
      try {
        const jpeg = await sharp(bytes, { failOn: 'error', pages: 1 })
          .rotate()
          .resize({ width: width ?? MAX_FRAME_WIDTH, withoutEnlargement: width === undefined })
          .flatten({ background: '#ffffff' })
          .jpeg({ quality: 85 })
          .toBuffer();
        return { jpeg, etag: etagOf(jpeg) };
      } catch (error) {
        throw new UndecodableFrameError((error as Error).message);
      }
    });
  }

  private async runFfmpeg(args: string[], location: string, signal: AbortSignal): Promise<RenderedFrame> {
    const out = await this.processes.run(this.paths.ffmpeg, args, { signal, maxStdout: MAX_JPEG_BYTES });
    if (out.code !== 0) throw failureOf(out.stderr, location);
    // ffmpeg ends without output when the seek lands after the last decodable frame.
    if (out.stdout.length === 0) throw new UndecodableFrameError('no frame at that moment');
    return { jpeg: out.stdout, etag: etagOf(out.stdout) };
  }

  /** Signed URLs outlive the longest render that may use them. */
  private urlLifetimeSeconds(): number {
    return Math.ceil(this.limits.timeoutMs / 1000) + 60;
  }
}

/** A failed ffmpeg/ffprobe run: the storage behind a URL failing (502), else undecodable media (400). */
function failureOf(stderr: string, location: string): Error {
  const detail = withoutLocation(stderr, location) || 'ffmpeg failed';
  if (/^https?:/.test(location) && REMOTE_FAILURE.test(stderr)) {
    return new StorageUnavailableError(`reading media for a frame failed: ${detail.slice(-500)}`);
  }
  return new UndecodableFrameError(detail.slice(-500));
}
