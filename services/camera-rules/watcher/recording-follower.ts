import type { IndexedMedia, SearchIndex } from '../actions/search-index.js';
import type { Recorder, RecordingSegment } from '../recorder/recorder.js';

/** A recorder that lists its finished recordings (Frigate). */
export type RecordingRecorder = Pick<Recorder, 'kind' | 'clip'> & Required<Pick<Recorder, 'recordings'>>;

/** How much one catch-up reads and sends. */
export interface RecordingFollowerLimits {
  /** Longest clip sent to search at once, seconds: consecutive segments are joined up to this. */
  maxClipSeconds: number;
  /** Most clips one catch-up sends; the rest waits for the next one. */
  maxClips: number;
  /** Span of one recordings listing, seconds. */
  windowSeconds: number;
  /**
   * A stretch with no recording is passed over only once it is this old (seconds): Frigate lists a segment only after
   * moving it out of its cache, which it may hold while an event is in progress.
   */
  settleSeconds: number;
}

export const DEFAULT_RECORDING_LIMITS: RecordingFollowerLimits = {
  maxClipSeconds: 60,
  maxClips: 30,
  windowSeconds: 3600,
  settleSeconds: 600,
};

/** A step of a catch-up: the new position and, when a clip was sent, where search put it. */
export interface RecordingProgress {
  /** Recordings up to here are in search (or there were none): the next catch-up starts here. */
  position: number;
  /** The clip just sent; undefined when the position moved over a settled stretch without recordings. */
  clip?: { start: number; end: number; indexed: IndexedMedia };
}

/** Segments closer than this (seconds) are one recording. */
const GAP_SECONDS = 1;
/** A segment must end this much after the position to be new (times are fractional seconds). */
const EPSILON = 1e-3;

/** Consecutive segments (oldest first) joined into clips of at most `maxSeconds` (a longer segment alone). */
export function clipRanges(segments: RecordingSegment[], maxSeconds: number): Array<{ start: number; end: number }> {
  const ranges: Array<{ start: number; end: number }> = [];
  for (const segment of segments) {
    const last = ranges.at(-1);
    if (last && segment.start_time - last.end <= GAP_SECONDS && segment.end_time - last.start <= maxSeconds) {
      last.end = Math.max(last.end, segment.end_time);
    } else ranges.push({ start: segment.start_time, end: segment.end_time });
  }
  return ranges;
}

/**
 * A watcher's recordings going to search: from a position (Unix seconds), the camera's finished recording segments
 * (the recorder's `recordings`, a window at a time) are joined into clips of consecutive segments, each fetched as a
 * clip by time and uploaded to search with the tags `camera:<camera>`, `source:<recorder kind>` and
 * `recording:<clip start>`. `progress` is told after each clip (the caller keeps the position in the watcher's status)
 * and when a settled stretch without recordings is passed over. A failure (the recorder or search does not answer, a
 * clip not ready) ends the catch-up where it is: the next one starts from the last position told.
 */
export class RecordingFollower {
  constructor(
    private readonly recorder: RecordingRecorder,
    private readonly search: SearchIndex,
    private readonly limits: RecordingFollowerLimits = DEFAULT_RECORDING_LIMITS,
  ) {}

  /** Sends what was recorded between `from` and `now`, at most `maxClips` clips; resolves with the new position. */
  async catchUp(
    camera: string,
    from: number,
    now: number,
    progress: (step: RecordingProgress) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<number> {
    const { maxClipSeconds, maxClips, windowSeconds, settleSeconds } = this.limits;
    let position = from;
    let sent = 0;
    while (sent < maxClips && !signal?.aborted) {
      const before = Math.min(now, position + windowSeconds);
      if (before <= position) break;
      // New: ending after the position (a segment across it is sent from the position on).
      const segments = (await this.recorder.recordings(camera, position, before, signal))
        .filter((segment) => segment.end_time > position + EPSILON)
        .map((segment) => ({ ...segment, start_time: Math.max(segment.start_time, position) }));
      if (segments.length === 0) {
        const settled = Math.min(before, now - settleSeconds);
        if (settled <= position) break;
        position = settled;
        await progress({ position });
        continue;
      }
      for (const range of clipRanges(segments, maxClipSeconds)) {
        if (sent >= maxClips || signal?.aborted) break;
        const bytes = await this.recorder.clip(camera, range.start, range.end, signal);
        const indexed = await this.search.add(
          {
            bytes,
            filename: `${camera}-${range.start}-${range.end}.mp4`,
            contentType: 'video/mp4',
            tags: [`camera:${camera}`, `source:${this.recorder.kind}`, `recording:${range.start}`],
          },
          signal,
        );
        sent++;
        position = range.end;
        await progress({ position, clip: { ...range, indexed } });
      }
    }
    return position;
  }
}
