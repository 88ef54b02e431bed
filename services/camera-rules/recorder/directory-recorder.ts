import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { frameJpeg } from '../media/ffmpeg.js';
import type { DetectionLog } from './detection-log.js';
import {
  MediaNotReadyError,
  type Camera,
  type EventQuery,
  type Recorder,
  type RecorderEvent,
  type RecorderReachability,
} from './recorder.js';
import { SegmentRefusedError, type Segment, type SegmentAnalyser, type SegmentAnalysis } from './segment-analysis.js';

/** Labels of a directory camera: Frigate's default `objects.track`. */
export const DIRECTORY_LABELS = ['person'];

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const HOUR = /^\d{2}$/;
const SEGMENT = /^(\d{2})\.(\d{2})\.mp4$/;

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

/** Where the directory recorder's events come from: an analyser of new segments and the log of their analyses. */
export interface DirectoryAnalysis {
  analyser: SegmentAnalyser;
  log: DetectionLog;
}

/** A segment with the start of the next one (its end; null for the newest, which may still be written). */
interface SpannedSegment {
  segment: Segment;
  end: number | null;
}

/**
 * Recordings in Frigate's directory layout (`YYYY-MM-DD/HH/<camera>/MM.SS.mp4`, UTC), the embedded default: the
 * cameras are the camera directories seen. A segment is final once the next one exists; a watcher's catch-up
 * (`analyse`) sends each new final segment to search and reads back its detections (the analyser: dataprep), kept in
 * the detection log. Each analysed segment gives one event labelled `recording` (the segment, from its start to the
 * next segment's) and one event per detected class (`person`, `car`, …) from the first to the last sampled frame
 * showing it. The directory need not exist: no camera then. Camera names from requests are only compared with the
 * names found, never joined into a path.
 */
export class DirectoryRecorder implements Recorder {
  readonly kind = 'directory';

  constructor(
    private readonly root: string,
    private readonly analysis?: DirectoryAnalysis,
  ) {}

  async cameras(): Promise<Camera[]> {
    const names = new Set<string>();
    for (const date of await subdirs(this.root, DATE)) {
      for (const hour of await subdirs(path.join(this.root, date), HOUR)) {
        for (const camera of await subdirs(path.join(this.root, date, hour))) names.add(camera);
      }
    }
    return [...names].sort().map((name) => ({ name, labels: [...DIRECTORY_LABELS] }));
  }

  /** Segments of `camera`, newest first, each with its end. */
  private async *spans(camera: string): AsyncGenerator<SpannedSegment> {
    let newer: Segment | undefined;
    for (const date of await subdirs(this.root, DATE)) {
      for (const hour of await subdirs(path.join(this.root, date), HOUR)) {
        if (!(await subdirs(path.join(this.root, date, hour))).includes(camera)) continue;
        for (const segment of await segmentsIn(path.join(this.root, date, hour, camera), camera, date, hour)) {
          yield { segment, end: newer?.start ?? null };
          newer = segment;
        }
      }
    }
  }

  /** The segment holding Unix time `at` (the last one starting at or before it). */
  private async segmentAt(camera: string, at: number): Promise<SpannedSegment | undefined> {
    for await (const span of this.spans(camera)) if (span.segment.start <= at) return span;
    return undefined;
  }

  async events(query: EventQuery, signal?: AbortSignal): Promise<RecorderEvent[]> {
    const { after, before, limit } = query;
    const events: RecorderEvent[] = [];
    if (!this.analysis) return events;
    // Every event of a segment starts within it: a segment that ended by `after` holds none, nor do older ones.
    const inRange = async function* (spans: AsyncIterable<SpannedSegment>) {
      for await (const span of spans) {
        if (after !== undefined && span.end !== null && span.end <= after) return;
        if (before === undefined || span.segment.start < before) yield span;
      }
    };
    let ordered: AsyncIterable<SpannedSegment> | SpannedSegment[] = inRange(this.spans(query.camera));
    if (query.oldestFirst) {
      // The directory is listed newest first: the segments in range (names only) are gathered, then read oldest first.
      const spans: SpannedSegment[] = [];
      for await (const span of ordered) spans.push(span);
      ordered = spans.reverse();
    }
    for await (const span of ordered) {
      const found = (await this.analysed(span, query.analyse === true, signal)).filter(
        (event) =>
          (after === undefined || event.start_time > after) && (before === undefined || event.start_time < before),
      );
      for (const event of query.oldestFirst ? found.reverse() : found) {
        events.push(event);
        if (events.length >= limit) return events;
      }
    }
    return events;
  }

  /** The events of a segment, newest first: from its analysis, made now when `analyse` and the segment is final. */
  private async analysed(span: SpannedSegment, analyse: boolean, signal?: AbortSignal): Promise<RecorderEvent[]> {
    if (!this.analysis) return [];
    const { analyser, log } = this.analysis;
    const { segment, end } = span;
    let analysis = await log.read(segment);
    if (!analysis && analyse && end !== null) {
      analysis = await analyser.analyse(segment, signal).catch((error: unknown) => {
        // A segment search refuses (a torn file) is passed over for good, why kept in the log: catch-ups go on.
        if (!(error instanceof SegmentRefusedError)) throw error;
        return { videoId: '', bucketName: '', detections: [], refused: error.message };
      });
      await log.write(segment, analysis);
    }
    return analysis && !analysis.refused ? segmentEvents(segment, end, analysis) : [];
  }

  async clip(camera: string, start: number, end: number): Promise<Buffer> {
    // The segment holding `start`, or else the first one starting within the window.
    let covering: Segment | undefined;
    for await (const { segment } of this.spans(camera)) {
      if (segment.start > end) continue;
      covering = segment;
      if (segment.start <= start) break;
    }
    if (!covering) throw new MediaNotReadyError(`no recording of ${camera} covers ${start}–${end}`);
    return readFile(covering.file);
  }

  /** The frame at the event's start, from the segment holding it. */
  async snapshot(event: RecorderEvent, signal?: AbortSignal): Promise<Buffer> {
    const span = await this.segmentAt(event.camera, event.start_time);
    if (!span) throw new MediaNotReadyError(`no recording for event ${event.id}`);
    return frameJpeg(span.segment.file, Math.max(0, event.start_time - span.segment.start), signal);
  }

  async reachability(): Promise<RecorderReachability> {
    return {
      reachable: true,
      detail: 'recordings directory (CAMERA_RULES_RECORDINGS_DIR); a missing directory has no camera',
    };
  }

  async close(): Promise<void> {}
}

/** An event id's part from a label (ids are `<segment start>-<camera>-<label>`). */
const idPart = (label: string) => label.replace(/[^\w.-]+/g, '_');

/**
 * The events of an analysed segment, newest first: one per detected class, then the `recording` event — at an equal
 * start the recording comes after the classes in time order, so a watcher that saw it has seen them.
 */
function segmentEvents(segment: Segment, end: number | null, analysis: SegmentAnalysis): RecorderEvent[] {
  const { start, camera } = segment;
  const common = { camera, sub_label: null, zones: [], has_clip: true, has_snapshot: true, top_score: null };
  const media = { video_id: analysis.videoId, bucket_name: analysis.bucketName, segment_start: start };
  const classes: RecorderEvent[] = analysis.detections
    .filter((d) => d.seen.length > 0)
    .map((d) => ({
      ...common,
      id: `${start}-${camera}-${idPart(d.label)}`,
      label: d.label,
      start_time: start + d.seen[0],
      end_time: start + d.seen[d.seen.length - 1],
      data: { type: 'object', ...(d.box ? { box: d.box } : {}), seen: d.seen, ...media },
    }));
  const recording: RecorderEvent = {
    ...common,
    id: `${start}-${camera}`,
    label: 'recording',
    start_time: start,
    end_time: end,
    data: { type: 'recording', labels: analysis.detections.map((d) => d.label), ...media },
  };
  const newestFirst = (a: RecorderEvent, b: RecorderEvent) =>
    b.start_time - a.start_time || (a.label === 'recording' ? -1 : b.label === 'recording' ? 1 : 0);
  return [...classes, recording].sort(newestFirst);
}
