/** A camera the recorder knows and the object labels it tracks. */
export interface Camera {
  name: string;
  /** Labels the recorder tracks on it (Frigate's `objects.track`, default `["person"]`). */
  labels: string[];
}

/** One recorder event, in Frigate's `/api/events` shape (times are Unix seconds, fractional). */
export interface RecorderEvent {
  id: string;
  camera: string;
  label: string;
  sub_label: string | null;
  zones: string[];
  start_time: number;
  /** null while the event is in progress. */
  end_time: number | null;
  has_clip: boolean;
  has_snapshot: boolean;
  top_score: number | null;
  /** Frigate's `data`: `box`, `region`, `score`, `top_score`, `type`, `description` (GenAI), … */
  data: Record<string, unknown>;
}

/**
 * Which events `events()` lists: one camera, start time strictly after/before, newest first (or oldest first), at
 * most `limit` — the newest ones, or with `oldestFirst` the oldest.
 */
export interface EventQuery {
  camera: string;
  after?: number;
  before?: number;
  limit: number;
  /** Ascending start times (Frigate's `sort=date_asc`): the `limit` oldest events after `after`. */
  oldestFirst?: boolean;
  /**
   * A watcher's catch-up: the directory recorder first analyses the final segments in range that have not been
   * (sends them to search and reads their detections). Other listings show only what was analysed; Frigate ignores it.
   */
  analyse?: boolean;
}

/**
 * One finished recording segment, in Frigate's `GET /api/<camera>/recordings` shape (its Recordings table; times in
 * Unix seconds, `segment_size` in MB). Frigate lists a segment only once it has left its cache, so each is final.
 */
export interface RecordingSegment {
  id: string;
  start_time: number;
  end_time: number;
  segment_size: number | null;
  motion: number | null;
  objects: number | null;
  duration: number | null;
}

/** Whether the recorder answers, in words for `/health`. */
export interface RecorderReachability {
  reachable: boolean;
  detail: string;
}

/** The recorder did not answer, or answered something unusable; routes answer 502 with its message. */
export class RecorderUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecorderUnavailableError';
  }
}

/** The clip or snapshot asked for is not there (yet): Frigate has not moved the segments out of its cache. */
export class MediaNotReadyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MediaNotReadyError';
  }
}

/**
 * The network video recorder camera-rules reads: its cameras, their events and the media of an event. Two adapters:
 * Frigate over its HTTP API (FrigateRecorder) and a recordings directory in Frigate's layout (DirectoryRecorder).
 */
export interface Recorder {
  /** `frigate` or `directory`, named in health. */
  readonly kind: string;
  /** Every camera with its tracked labels; RecorderUnavailableError when the recorder does not answer. */
  cameras(signal?: AbortSignal): Promise<Camera[]>;
  /** Events of one camera, newest first. */
  events(query: EventQuery, signal?: AbortSignal): Promise<RecorderEvent[]>;
  /** An MP4 clip of `camera` between two Unix times (seconds); MediaNotReadyError when no recording covers it yet. */
  clip(camera: string, start: number, end: number, signal?: AbortSignal): Promise<Buffer>;
  /**
   * The finished recording segments of `camera` that end at or after `after` and start at or before `before` (Unix
   * seconds), oldest first. Only a recorder that keeps recordings apart from its events has them (Frigate); the
   * directory recorder sends its segments to search itself (EventQuery.analyse).
   */
  recordings?(camera: string, after: number, before: number, signal?: AbortSignal): Promise<RecordingSegment[]>;
  /** The event's JPEG snapshot; MediaNotReadyError when it has none (yet). */
  snapshot(event: RecorderEvent, signal?: AbortSignal): Promise<Buffer>;
  reachability(signal?: AbortSignal): Promise<RecorderReachability>;
  close(): Promise<void>;
}
