import { isObject } from '../../lib/json/index.js';
import { OutboundError, outboundRequest, UNRESTRICTED, type OutboundResponse } from '../../lib/outbound/index.js';
import { withoutCredentials } from '../health/reachability.js';
import { FrigateSession, type FrigateCredentials } from './frigate-session.js';
import {
  MediaNotReadyError,
  RecorderUnavailableError,
  type Camera,
  type EventQuery,
  type Recorder,
  type RecorderEvent,
  type RecorderReachability,
  type RecordingSegment,
} from './recorder.js';

/** Frigate's default `objects.track` when a camera's config names none. */
export const FRIGATE_DEFAULT_TRACK = ['person'];

/** Largest JSON answer read from Frigate (its whole config for /api/config). */
const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** Largest clip or snapshot read from Frigate. */
const MAX_MEDIA_BYTES = 512 * 1024 * 1024;

/** How to reach one Frigate. */
export interface FrigateOptions {
  /** HTTP root, no trailing `/`. */
  url: string;
  /** Sent as `Authorization: Bearer` (a JWT of Frigate's, or a proxy's token). */
  token?: string;
  /** A Frigate user: a session is opened with `/api/login` (its authenticated port, 8971). */
  credentials?: FrigateCredentials;
  timeoutMs: number;
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * An event from Frigate's `/api/events` (or an MQTT `events` message's `after`, whose zones are `entered_zones` and
 * whose detection fields sit at the top level) in the port's shape; undefined when it lacks an id, camera or start.
 */
export function toRecorderEvent(raw: unknown): RecorderEvent | undefined {
  if (!isObject(raw)) return undefined;
  const id = str(raw.id);
  const camera = str(raw.camera);
  const start = num(raw.start_time);
  if (!id || !camera || start === null) return undefined;
  const zones = Array.isArray(raw.zones) ? raw.zones : Array.isArray(raw.entered_zones) ? raw.entered_zones : [];
  const data: Record<string, unknown> = isObject(raw.data)
    ? { ...raw.data }
    : Object.fromEntries(
        ['box', 'region', 'score', 'top_score', 'attributes', 'current_zones'].flatMap((key) =>
          raw[key] === undefined ? [] : [[key, raw[key]]],
        ),
      );
  // sub_label is a string from the API and [name, score] over MQTT.
  const subLabel = Array.isArray(raw.sub_label) ? str(raw.sub_label[0]) : str(raw.sub_label);
  return {
    id,
    camera,
    label: str(raw.label) ?? 'unknown',
    sub_label: subLabel,
    zones: zones.filter((zone): zone is string => typeof zone === 'string'),
    start_time: start,
    end_time: num(raw.end_time),
    has_clip: raw.has_clip === true,
    has_snapshot: raw.has_snapshot === true,
    top_score: num(raw.top_score) ?? num(data.top_score),
    data,
  };
}

/** A row of Frigate's `/api/<camera>/recordings` in the port's shape; undefined without an id, start and end. */
export function toRecordingSegment(raw: unknown): RecordingSegment | undefined {
  if (!isObject(raw)) return undefined;
  const id = str(raw.id);
  const start = num(raw.start_time);
  const end = num(raw.end_time);
  if (!id || start === null || end === null || end < start) return undefined;
  return {
    id,
    start_time: start,
    end_time: end,
    segment_size: num(raw.segment_size),
    motion: num(raw.motion),
    objects: num(raw.objects),
    duration: num(raw.duration),
  };
}

/**
 * Frigate over its HTTP API (`frigate/api/`): `/api/config` for cameras and their `objects.track`, `/api/events`
 * (camera, after, before, limit; newest first, or oldest with `sort=date_asc`), `/api/<camera>/recordings` (after, before: the finished segments
 * overlapping the span, oldest first), a clip by time `/api/<camera>/start/<s>/end/<e>/clip.mp4` (400 "No
 * recordings found" while the segments are still in Frigate's cache) and `/api/events/<id>/snapshot.jpg`. A Frigate
 * that does not answer, or answers 5xx or something unreadable, is RecorderUnavailableError (502 at the edge).
 */
export class FrigateRecorder implements Recorder {
  readonly kind = 'frigate';
  private readonly shown: string;

  private readonly session?: FrigateSession;

  constructor(private readonly options: FrigateOptions) {
    this.shown = withoutCredentials(options.url);
    if (options.credentials) {
      this.session = new FrigateSession({
        url: options.url,
        shown: this.shown,
        credentials: options.credentials,
        timeoutMs: options.timeoutMs,
      });
    }
  }

  /** GET with the configured credentials; a session Frigate no longer accepts (401) is opened again, once. */
  private async get(path: string, maxBytes: number, signal?: AbortSignal): Promise<OutboundResponse> {
    for (let attempt = 1; ; attempt++) {
      const headers = this.session
        ? await this.session.headers()
        : this.options.token
          ? { authorization: `Bearer ${this.options.token}` }
          : {};
      let response: OutboundResponse;
      try {
        response = await outboundRequest(`${this.options.url}${path}`, {
          policy: UNRESTRICTED,
          timeoutMs: this.options.timeoutMs,
          maxBytes,
          signal,
          headers,
        });
      } catch (error) {
        throw this.unavailable(error);
      }
      if (!this.session) return response;
      if (response.status === 401 && attempt === 1) {
        response.discard();
        this.session.rejected(headers);
        continue;
      }
      this.session.absorb(response);
      return response;
    }
  }

  private unavailable(error: unknown): Error {
    if (error instanceof OutboundError) {
      return new RecorderUnavailableError(`Frigate at ${this.shown} does not answer: ${error.message}`);
    }
    return error as Error;
  }

  private async json(path: string, signal?: AbortSignal): Promise<unknown> {
    const response = await this.get(path, MAX_JSON_BYTES, signal);
    let bytes: Buffer;
    try {
      bytes = await response.bytes();
    } catch (error) {
      throw this.unavailable(error);
    }
    if (response.status !== 200) {
      throw new RecorderUnavailableError(
        `Frigate at ${this.shown} answered ${path.split('?')[0]} with HTTP ${response.status}`,
      );
    }
    try {
      return JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new RecorderUnavailableError(`Frigate at ${this.shown} answered ${path.split('?')[0]} with invalid JSON`);
    }
  }

  private async media(path: string, what: string, signal?: AbortSignal): Promise<Buffer> {
    const response = await this.get(path, MAX_MEDIA_BYTES, signal);
    let bytes: Buffer;
    try {
      bytes = await response.bytes();
    } catch (error) {
      throw this.unavailable(error);
    }
    if (response.status === 200) return bytes;
    // Frigate answers 400 (clip by time: no recording yet) or 404 (event without snapshot/clip, or not yet found).
    if (response.status === 400 || response.status === 404) {
      let message = `HTTP ${response.status}`;
      try {
        const body = JSON.parse(bytes.toString('utf8'));
        if (isObject(body) && typeof body.message === 'string') message = body.message.slice(0, 200);
      } catch {
        // not JSON: keep the status
      }
      throw new MediaNotReadyError(`Frigate has no ${what} yet (${message})`);
    }
    throw new RecorderUnavailableError(`Frigate at ${this.shown} answered the ${what} with HTTP ${response.status}`);
  }

  async cameras(signal?: AbortSignal): Promise<Camera[]> {
    const config = await this.json('/api/config', signal);
    const cameras = isObject(config) && isObject(config.cameras) ? config.cameras : {};
    return Object.entries(cameras).map(([name, camera]) => {
      const objects = isObject(camera) && isObject(camera.objects) ? camera.objects : {};
      const track = Array.isArray(objects.track)
        ? objects.track.filter((label): label is string => typeof label === 'string')
        : [...FRIGATE_DEFAULT_TRACK];
      return { name, labels: track };
    });
  }

  async events(query: EventQuery, signal?: AbortSignal): Promise<RecorderEvent[]> {
    const params = new URLSearchParams({ camera: query.camera, limit: String(query.limit) });
    if (query.after !== undefined) params.set('after', String(query.after));
    if (query.before !== undefined) params.set('before', String(query.before));
    if (query.oldestFirst) params.set('sort', 'date_asc');
    const answer = await this.json(`/api/events?${params}`, signal);
    if (!Array.isArray(answer))
      throw new RecorderUnavailableError(`Frigate at ${this.shown} answered events with no list`);
    return answer.flatMap((raw) => toRecorderEvent(raw) ?? []);
  }

  /**
   * `GET /api/<camera>/recordings?after=&before=`: Frigate selects `end_time >= after` and `start_time <= before`,
   * ordered by start. Both bounds are always sent: Frigate's own defaults (the last hour) are fixed when it starts.
   */
  async recordings(camera: string, after: number, before: number, signal?: AbortSignal): Promise<RecordingSegment[]> {
    const params = new URLSearchParams({ after: String(after), before: String(before) });
    const answer = await this.json(`/api/${encodeURIComponent(camera)}/recordings?${params}`, signal);
    if (!Array.isArray(answer))
      throw new RecorderUnavailableError(`Frigate at ${this.shown} answered recordings with no list`);
    return answer.flatMap((raw) => toRecordingSegment(raw) ?? []).sort((a, b) => a.start_time - b.start_time);
  }

  clip(camera: string, start: number, end: number, signal?: AbortSignal): Promise<Buffer> {
    return this.media(
      `/api/${encodeURIComponent(camera)}/start/${start}/end/${end}/clip.mp4`,
      `clip of ${camera} for ${start}–${end}`,
      signal,
    );
  }

  snapshot(event: RecorderEvent, signal?: AbortSignal): Promise<Buffer> {
    return this.media(`/api/events/${encodeURIComponent(event.id)}/snapshot.jpg`, `snapshot of ${event.id}`, signal);
  }

  async reachability(signal?: AbortSignal): Promise<RecorderReachability> {
    try {
      const response = await this.get('/api/version', 64 * 1024, signal);
      response.discard();
      return response.status === 200
        ? { reachable: true, detail: `${this.shown}/api/version answers` }
        : { reachable: false, detail: `${this.shown}/api/version answered HTTP ${response.status}` };
    } catch (error) {
      return { reachable: false, detail: (error as Error).message };
    }
  }

  async close(): Promise<void> {}
}
