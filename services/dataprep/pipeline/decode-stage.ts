import { decodeImage } from '../../lib/media/image-decode.js';
import { extractFrames, type VideoFrame } from '../../lib/media/video-frames.js';
import type { BoundedQueue } from './bounded-queue.js';
import type { PipelineRun } from './pipeline-run.js';

/** The size of `size` scaled down (aspect kept) so that neither side exceeds `maxSide`. */
export function fitWithin(size: { width: number; height: number }, maxSide: number): { width: number; height: number } {
  const scale = Math.min(1, maxSide / Math.max(size.width, size.height));
  return {
    width: Math.max(1, Math.round(size.width * scale)),
    height: Math.max(1, Math.round(size.height * scale)),
  };
}

/** Decodes the image, or every `frameInterval`-th frame of the video (ffmpeg, a process of its own), into `frames`. */
export async function decodeStage(run: PipelineRun, frames: BoundedQueue<VideoFrame>): Promise<void> {
  const { deps, request, clock, counts, settings } = run;
  if (!run.isVideo) {
    const image = await clock.time('decode', () =>
      decodeImage(request.localPath, { ffmpeg: deps.ffmpegPaths?.ffmpeg }),
    );
    counts.framesExtracted = 1;
    await frames.push({ frameId: 0, timestampSeconds: 0, image });
    return;
  }
  const source = extractFrames(request.localPath, {
    every: run.frameInterval,
    info: run.videoInfo,
    scale: run.decodeSize,
    paths: deps.ffmpegPaths,
    threads: settings.decodeThreads,
    niceness: settings.decodeNiceness,
    aheadFrames: 2,
    signal: run.signal,
  });
  try {
    for (;;) {
      const next = await clock.time('decode', () => source.next());
      if (next.done) return;
      counts.framesExtracted++;
      await frames.push(next.value);
    }
  } finally {
    // Ends ffmpeg when this stage stops early (another stage failed while a frame was waiting for room).
    await source.return(undefined);
  }
}
