import { afterAll, describe, expect, it } from '@jest/globals';
import {
  makeCorruptMp4,
  makeTestVideo,
  makeTruncatedMp4,
  removeTestMediaCache,
  writeTestFile,
} from '../../../test/support/media.js';
import { watchAbortListeners } from '../../../test/support/abort-listeners.js';
import { isProcessAlive } from '../process/index.js';
import { parseProbeOutput, probeVideo, VideoProbeError } from './probe-video.js';
import { extractFrames, FrameDecodeError, type VideoFrame } from './video-frames.js';

afterAll(removeTestMediaCache);

async function collect(iterable: AsyncIterable<VideoFrame>): Promise<VideoFrame[]> {
  const frames: VideoFrame[] = [];
  for await (const frame of iterable) frames.push(frame);
  return frames;
}

describe('probeVideo', () => {
  it('reads fps, frame count, duration, size and codec of an MP4', async () => {
    const file = await makeTestVideo({ seconds: 2, fps: 25, width: 160, height: 120 });
    const info = await probeVideo(file);
    expect(info).toEqual({ fps: 25, totalFrames: 50, durationSeconds: 2, width: 160, height: 120, codec: 'h264' });
  });

  it('rejects a corrupt MP4, a truncated MP4, a text file and a missing file with VideoProbeError', async () => {
    const text = await writeTestFile('notes.mp4', 'just some text, not a video\n');
    for (const file of [await makeCorruptMp4(), await makeTruncatedMp4(), text, '/nonexistent/video.mp4']) {
      await expect(probeVideo(file)).rejects.toThrow(VideoProbeError);
    }
    await expect(probeVideo('/nonexistent/video.mp4')).rejects.toThrow(/file not found/);
  });
});

describe('parseProbeOutput', () => {
  it('reports displayed size for rotated video and estimates frames when the container has no count', () => {
    const json = JSON.stringify({
      streams: [
        {
          codec_name: 'h264',
          width: 1920,
          height: 1080,
          avg_frame_rate: '30000/1001',
          side_data_list: [{ rotation: -90 }],
        },
      ],
      format: { duration: '10.010000' },
    });
    const info = parseProbeOutput('phone.mp4', json);
    expect(info).toMatchObject({ width: 1080, height: 1920, totalFrames: 300, durationSeconds: 10.01, codec: 'h264' });
    expect(info.fps).toBeCloseTo(29.97, 2);
  });

  it('rejects output without a video stream', () => {
    expect(() => parseProbeOutput('a.mp4', JSON.stringify({ streams: [] }))).toThrow(/no video stream/);
  });
});

describe('extractFrames', () => {
  it.each([1, 4, 7, 15])('yields every %ith frame with source frame ids and timestamps', async (every) => {
    // testsrc's frames carry a moving pattern, so equal ids mean really decoded, distinct frames.
    const file = await makeTestVideo({ seconds: 2, fps: 25, width: 160, height: 120 });
    const frames = await collect(extractFrames(file, { every }));
    const expectedIds = Array.from({ length: Math.ceil(50 / every) }, (_, i) => i * every);
    expect(frames.map((f) => f.frameId)).toEqual(expectedIds);
    expect(frames.map((f) => f.timestampSeconds)).toEqual(expectedIds.map((id) => id / 25));
    for (const frame of frames) {
      expect(frame.image.width).toBe(160);
      expect(frame.image.height).toBe(120);
      expect(frame.image.data.length).toBe(160 * 120 * 3);
    }
    if (frames.length > 1) expect(Buffer.compare(frames[0].image.data, frames[1].image.data)).not.toBe(0);
  });

  it('decodes the same pixels for a frame whatever the interval', async () => {
    const file = await makeTestVideo({ seconds: 2, fps: 25, width: 160, height: 120 });
    const all = await collect(extractFrames(file, { every: 1 }));
    const every5 = await collect(extractFrames(file, { every: 5 }));
    expect(Buffer.compare(all[10].image.data, every5[2].image.data)).toBe(0);
  });

  it('scales frames to the requested size', async () => {
    const file = await makeTestVideo({ seconds: 2, fps: 25, width: 160, height: 120 });
    const [first] = await collect(extractFrames(file, { every: 25, scale: { width: 80, height: 60 } }));
    expect(first.image).toMatchObject({ width: 80, height: 60 });
    expect(first.image.data.length).toBe(80 * 60 * 3);
  });

  it('kills ffmpeg when the consumer stops early', async () => {
    const file = await makeTestVideo({ seconds: 2, fps: 25, width: 160, height: 120 });
    const spawned: number[] = [];
    const childProcess = await import('node:child_process');
    const frames: number[] = [];
    // Observe the ffmpeg pid through the process table: the only ffmpeg child of this process.
    for await (const frame of extractFrames(file, { every: 1 })) {
      frames.push(frame.frameId);
      spawned.push(...ffmpegChildren(childProcess));
      if (frames.length === 2) break;
    }
    expect(frames).toEqual([0, 1]);
    expect(spawned.length).toBeGreaterThan(0);
    await waitFor(() => spawned.every((pid) => !isProcessAlive(pid)));
  });

  it('stops and kills ffmpeg when the signal aborts', async () => {
    const file = await makeTestVideo({ seconds: 2, fps: 25, width: 160, height: 120 });
    const controller = new AbortController();
    const childProcess = await import('node:child_process');
    const seen: number[] = [];
    const pids: number[] = [];
    const run = (async () => {
      for await (const frame of extractFrames(file, { every: 1, signal: controller.signal })) {
        seen.push(frame.frameId);
        pids.push(...ffmpegChildren(childProcess));
        if (frame.frameId === 3) controller.abort(new Error('stop now'));
      }
    })();
    await expect(run).rejects.toThrow('stop now');
    expect(seen).toEqual([0, 1, 2, 3]);
    await waitFor(() => pids.every((pid) => !isProcessAlive(pid)));
  });

  it('raises FrameDecodeError carrying ffmpeg stderr when decoding fails', async () => {
    const file = await makeCorruptMp4();
    // A stale probe result lets decoding start, as when a file is replaced between probe and decode.
    const info = { fps: 25, totalFrames: 50, durationSeconds: 2, width: 160, height: 120, codec: 'h264' };
    const error = await collect(extractFrames(file, { every: 1, info })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FrameDecodeError);
    expect((error as Error).message).toMatch(/invalid|error|moov/i);
  });

  it('rejects a non-positive interval', async () => {
    const file = await makeTestVideo({ seconds: 2, fps: 25, width: 160, height: 120 });
    await expect(collect(extractFrames(file, { every: 0 }))).rejects.toThrow(RangeError);
  });

  it('links every decode in flight to a shared signal through one listener, whether it ends, breaks off or fails', async () => {
    const file = await makeTestVideo({ seconds: 1, fps: 4, width: 64, height: 48 });
    const corrupt = await makeCorruptMp4();
    const shared = new AbortController();
    const watch = watchAbortListeners(shared.signal);
    // Twelve decodes (one more than Node's warning allows listeners) hold their first frame at once, then a third
    // reads to the end, a third breaks off; the third on a corrupt file fails in its probe.
    const decodes = Array.from({ length: 12 }, (_, i) =>
      extractFrames(i % 3 === 2 ? corrupt : file, { every: 1, signal: shared.signal }),
    );
    const first = await Promise.all(decodes.map((decode) => decode.next().catch((error: Error) => error)));
    const outcomes = await Promise.all(
      decodes.map(async (decode, i) => {
        if (first[i] instanceof Error) return first[i].constructor.name;
        if (i % 3 === 1) return (await decode.return(undefined)).done ? 'broke off' : 'still running';
        return `${1 + (await collect({ [Symbol.asyncIterator]: () => decode })).length} frames`;
      }),
    );
    watch.stop();
    expect(outcomes).toEqual(Array.from({ length: 12 }, (_, i) => ['4 frames', 'broke off', 'VideoProbeError'][i % 3]));
    expect({ peak: watch.peak, warned: watch.warned(), now: watch.current() }).toEqual({
      peak: 1,
      warned: false,
      now: 0,
    });
  });
});

/** Pids of ffmpeg processes whose parent is this process (Linux: from `ps`). */
function ffmpegChildren(childProcess: typeof import('node:child_process')): number[] {
  const out = childProcess.execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], {
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, comm]) => comm === 'ffmpeg')
    .map(([pid]) => Number(pid));
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(condition()).toBe(true);
}
