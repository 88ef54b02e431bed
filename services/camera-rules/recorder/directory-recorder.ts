import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { firstFrameJpeg } from '../media/ffmpeg.js';
import {
  MediaNotReadyError,
  type Camera,
  type EventQuery,
  type Recorder,
  type RecorderEvent,
  type RecorderReachability,
} from './recorder.js';

/** Labels of a directory camera: Frigate's default `objects.track`. */
export const DIRECTORY_LABELS = ['person'];

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const HOUR = /^\d{2}$/;
const SEGMENT = /^(\d{2})\.(\d{2})\.mp4$/;

/** One recording segment: `<dir>/YYYY-MM-DD/HH/<camera>/MM.SS.mp4`, its start in Unix seconds (UTC). */
interface Segment {
  camera: string;
  file: string;
  start: number;
}

/** Sub-directory names of `dir` matching `pattern`, newest (largest) first; none when `dir` is missing. */
async function subdirs(dir: string, pattern?: RegExp): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory() && (!pattern || pattern.test(e.name)))
      .map((e) => e.name)
      .sort()
      .reverse();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Files of a camera's hour directory as segments, newest first. */
async function segmentsIn(dir: string, camera: string, date: string, hour: string): Promise<Segment[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const day = Date.parse(`${date}T${hour}:00:00Z`) / 1000;
  if (!Number.isFinite(day)) return [];
  return names
    .map((name) => ({ name, match: SEGMENT.exec(name) }))
    .filter((s): s is { name: string; match: RegExpExecArray } => s.match !== null)
    .map(({ name, match }) => ({
      camera,
      file: path.join(dir, name),
      start: day + Number(match[1]) * 60 + Number(match[2]),
    }))
    .sort((a, b) => b.start - a.start);
}

/**
 * Recordings in Frigate's directory layout (`YYYY-MM-DD/HH/<camera>/MM.SS.mp4`, UTC), the embedded default: the
 * cameras are the camera directories seen; each segment is one event (label `recording`) whose end is the next
 * segment's start (null for the newest, still being written). The directory need not exist: no camera then.
 * Camera names from requests are only compared with the names found, never joined into a path.
 */
export class DirectoryRecorder implements Recorder {
  readonly kind = 'directory';

  constructor(private readonly root: string) {}

  async cameras(): Promise<Camera[]> {
    const names = new Set<string>();
    for (const date of await subdirs(this.root, DATE)) {
      for (const hour of await subdirs(path.join(this.root, date), HOUR)) {
        for (const camera of await subdirs(path.join(this.root, date, hour))) names.add(camera);
      }
    }
    return [...names].sort().map((name) => ({ name, labels: [...DIRECTORY_LABELS] }));
  }

  /** Segments of `camera`, newest first, that `keep` takes, until it says `stop` (take none) or `last` (take it). */
  private async walk(camera: string, keep: (segment: Segment) => boolean | 'stop' | 'last'): Promise<Segment[]> {
    const found: Segment[] = [];
    for (const date of await subdirs(this.root, DATE)) {
      for (const hour of await subdirs(path.join(this.root, date), HOUR)) {
        if (!(await subdirs(path.join(this.root, date, hour))).includes(camera)) continue;
        for (const segment of await segmentsIn(path.join(this.root, date, hour, camera), camera, date, hour)) {
          const verdict = keep(segment);
          if (verdict === 'stop') return found;
          if (verdict) found.push(segment);
          if (verdict === 'last') return found;
        }
      }
    }
    return found;
  }

  async events(query: EventQuery): Promise<RecorderEvent[]> {
    const events: RecorderEvent[] = [];
    let newer: Segment | undefined;
    await this.walk(query.camera, (segment) => {
      const end = newer?.start ?? null;
      newer = segment;
      if (query.after !== undefined && segment.start <= query.after) return 'stop';
      if (query.before !== undefined && segment.start >= query.before) return false;
      events.push(toEvent(segment, end));
      return events.length >= query.limit ? 'stop' : false;
    });
    return events;
  }

  async clip(camera: string, start: number, end: number): Promise<Buffer> {
    // The segment that starts last at or before `start`, or the first one starting within the window.
    const covering = await this.walk(camera, (s) => (s.start > end ? false : s.start <= start ? 'last' : true));
    const segment = covering.at(-1);
    if (!segment) {
      throw new MediaNotReadyError(`no recording of ${camera} covers ${start}–${end}`);
    }
    return readFile(segment.file);
  }

  async snapshot(event: RecorderEvent, signal?: AbortSignal): Promise<Buffer> {
    const [segment] = await this.walk(event.camera, (s) =>
      s.start === event.start_time ? 'last' : s.start < event.start_time ? 'stop' : false,
    );
    if (!segment) throw new MediaNotReadyError(`no recording for event ${event.id}`);
    return firstFrameJpeg(segment.file, signal);
  }

  async reachability(): Promise<RecorderReachability> {
    return {
      reachable: true,
      detail: 'recordings directory (CAMERA_RULES_RECORDINGS_DIR); a missing directory has no camera',
    };
  }

  async close(): Promise<void> {}
}

/** The event of one segment. */
function toEvent(segment: Segment, end: number | null): RecorderEvent {
  return {
    id: `${segment.start}-${segment.camera}`,
    camera: segment.camera,
    label: 'recording',
    sub_label: null,
    zones: [],
    start_time: segment.start,
    end_time: end,
    has_clip: true,
    has_snapshot: true,
    top_score: null,
    data: { type: 'recording' },
  };
}
