import { createRequire } from 'node:module';

/** Absolute paths of the ffmpeg and ffprobe executables the media code spawns. */
export interface FfmpegPaths {
  ffmpeg: string;
  ffprobe: string;
}

const require = createRequire(import.meta.url);

let bundled: FfmpegPaths | undefined;

/** The binaries shipped by @ffmpeg-installer/ffmpeg and @ffprobe-installer/ffprobe (resolved once). */
export function bundledFfmpegPaths(): FfmpegPaths {
  // The installer packages are CommonJS and resolve the platform package at load time, so load them lazily.
  bundled ??= {
    ffmpeg: (require('@ffmpeg-installer/ffmpeg') as { path: string }).path,
    ffprobe: (require('@ffprobe-installer/ffprobe') as { path: string }).path,
  };
  return bundled;
}

/** Configured paths win (e.g. Debian's /usr/bin/ffmpeg); anything not configured falls back to the bundled binary. */
export function resolveFfmpegPaths(configured: Partial<FfmpegPaths> = {}): FfmpegPaths {
  const ffmpeg = configured.ffmpeg || undefined;
  const ffprobe = configured.ffprobe || undefined;
  if (ffmpeg && ffprobe) return { ffmpeg, ffprobe };
  const fallback = bundledFfmpegPaths();
  return { ffmpeg: ffmpeg ?? fallback.ffmpeg, ffprobe: ffprobe ?? fallback.ffprobe };
}
