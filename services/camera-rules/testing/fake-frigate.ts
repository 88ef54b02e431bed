import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { fixtureImage, makeTestVideo, runFfmpeg, testMediaDir } from '../../../test/support/media.js';
import { firstFrameJpeg } from '../media/ffmpeg.js';

/** One camera of the fake's config; `track` omitted: Frigate's resolved default `["person"]`. */
export interface FakeCamera {
  track?: string[];
}

/** An event as Frigate's database holds it (what `/api/events` selects). */
export interface FakeEvent {
  id: string;
  camera: string;
  label: string;
  sub_label: string | null;
  zones: string[];
  start_time: number;
  end_time: number | null;
  has_clip: boolean;
  has_snapshot: boolean;
  /** Frigate ≥ 0.14 leaves the column null and keeps the score in `data.top_score`. */
  top_score: number | null;
  false_positive: boolean | null;
  plus_id: string | null;
  retain_indefinitely: boolean;
  box: number[] | null;
  data: Record<string, unknown>;
}

/** What the fake was asked, for tests to check the client's requests. */
export interface SeenRequest {
  path: string;
  query: Record<string, string>;
  authorization?: string;
  cookie?: string;
  /** The session JWT the answer set (login, or a refresh). */
  issued?: string;
}

/** Frigate's native authentication (its port 8971 behind nginx's `auth_request`), as `frigate/api/auth.py` has it. */
export interface FakeFrigateAuth {
  user: string;
  password: string;
  /** `auth.session_length` (default 86400 s): the JWT's `exp` and the cookie's `Max-Age`. */
  sessionSeconds?: number;
  /** `auth.refresh_time` (default 1800 s): a cookie this close to `exp` is refreshed on the next request. */
  refreshSeconds?: number;
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

const NO_RECORDINGS = { success: false, message: 'No recordings found for the specified time range' };

/**
 * A Frigate NVR for tests, modelled on Frigate's source (`frigate/api/event.py`, `frigate/api/media.py`) and MQTT docs
 * (`docs/docs/integrations/mqtt.md`): an HTTP server on 127.0.0.1 with `/api/version`, `/api/config` (resolved:
 * every camera has `objects.track`), `/api/events` (camera, after, before as strict bounds on start_time, limit
 * default 100, newest first or `sort=date_asc`, Frigate's selected columns), `/api/<camera>/recordings` (the recorded
 * spans as 10-s segments), the clip by time (400 "No recordings found" until a recording covers the window; each
 * window's own bytes), `/api/events/<id>/snapshot.jpg` and `/api/events/<id>/clip.mp4` (404s in Frigate's
 * `{success, message}` body), real MP4 and JPEG made by ffmpeg; and Frigate's MQTT messages on a real broker. With
 * `auth`, it is Frigate's authenticated port: `POST /api/login` and a session JWT for everything else.
 */
export class FakeFrigate {
  readonly events: FakeEvent[] = [];
  readonly requests: SeenRequest[] = [];
  /** Recorded spans per camera, `[start, end]` Unix seconds (Frigate's Recordings table). */
  readonly recordings = new Map<string, Array<[number, number]>>();
  private server?: http.Server;
  private port = 0;
  private mqttClient?: MqttClient;
  /** The JWT secret; `endSessions()` changes it, as a Frigate restarted with a new secret. */
  private secret = randomBytes(32).toString('hex');
  /** `POST /api/login` answers, in order: the user name tried and the status. */
  readonly logins: Array<{ user: unknown; status: number }> = [];

  constructor(
    readonly cameras: Record<string, FakeCamera>,
    private readonly options: { broker?: string; topicPrefix?: string; auth?: FakeFrigateAuth } = {},
  ) {}

  /** Every session issued so far stops being accepted (Frigate's JWT secret changed). */
  endSessions(): void {
    this.secret = randomBytes(32).toString('hex');
  }

  /** A session JWT as Frigate's `create_encoded_jwt` makes it (HS256; sub, role, exp, iat). */
  private sessionJwt(user: string, expires: number): string {
    const head = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const body = base64url(
      JSON.stringify({ sub: user, role: 'admin', exp: expires, iat: Math.floor(Date.now() / 1000) }),
    );
    const signature = createHmac('sha256', this.secret).update(`${head}.${body}`).digest('base64url');
    return `${head}.${body}.${signature}`;
  }

  /** The claims of a JWT this fake signed with its current secret, or undefined. */
  private verify(jwt: string): { sub: string; exp: number } | undefined {
    const [head, body, signature] = jwt.split('.');
    if (!head || !body || !signature) return undefined;
    const expected = createHmac('sha256', this.secret).update(`${head}.${body}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { sub: string; exp: number };
    return claims.exp > Date.now() / 1000 ? claims : undefined;
  }

  private setSessionCookie(res: http.ServerResponse, user: string): void {
    const seconds = this.options.auth?.sessionSeconds ?? 86_400;
    const jwt = this.sessionJwt(user, Math.floor(Date.now() / 1000) + seconds);
    const seen = this.requests.at(-1);
    if (seen) seen.issued = jwt;
    res.setHeader('set-cookie', `frigate_token=${jwt}; HttpOnly; Max-Age=${seconds}; Path=/`);
  }

  /** `POST /api/login` (allow_public): 200 with the session cookie, 401 `Login failed`, 422 for a body FastAPI refuses. */
  private async login(req: http.IncomingMessage, res: http.ServerResponse, auth: FakeFrigateAuth): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: { user?: unknown; password?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = {};
    }
    const answer = (status: number, content: unknown) => {
      this.logins.push({ user: body.user, status });
      if (!res.hasHeader('content-type')) res.setHeader('content-type', 'application/json');
      res.writeHead(status);
      res.end(content === '' ? '' : JSON.stringify(content));
    };
    if (typeof body.user !== 'string' || typeof body.password !== 'string') {
      return answer(422, { detail: [{ type: 'missing', loc: ['body', 'user'], msg: 'Field required' }] });
    }
    if (body.user !== auth.user || body.password !== auth.password) return answer(401, { message: 'Login failed' });
    this.setSessionCookie(res, body.user);
    res.setHeader('content-type', 'text/plain');
    answer(200, '');
  }

  /**
   * nginx's `auth_request /auth` in front of every other `/api/` path: the JWT from `Authorization: Bearer` or the
   * cookie; none or invalid or expired → 401; a cookie within `refresh_time` of its end gets a refreshed one.
   */
  private authorized(req: http.IncomingMessage, res: http.ServerResponse, auth: FakeFrigateAuth): boolean {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const cookie = /(?:^|;\s*)frigate_token=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    const claims = this.verify(bearer ?? cookie ?? '');
    if (!claims) {
      res.writeHead(401, { location: '/login' });
      res.end();
      return false;
    }
    if (!bearer && claims.exp - (auth.refreshSeconds ?? 1800) <= Date.now() / 1000) {
      this.setSessionCookie(res, claims.sub);
    }
    return true;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get prefix(): string {
    return this.options.topicPrefix ?? 'frigate';
  }

  /** Listens (again, on the same port after stop()) and connects to the broker. */
  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: false, message: 'fake failure' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    if (this.options.broker && !this.mqttClient) {
      this.mqttClient = await mqtt.connectAsync(this.options.broker, { reconnectPeriod: 100 });
    }
  }

  /** Stops answering HTTP (connections refused), as a Frigate that went down. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async close(): Promise<void> {
    await this.stop();
    await this.mqttClient?.endAsync(true);
    this.mqttClient = undefined;
  }

  /** Adds an event as Frigate stores it; unset fields get Frigate-like values. */
  addEvent(event: Partial<FakeEvent> & Pick<FakeEvent, 'id' | 'camera' | 'start_time'>): FakeEvent {
    const stored: FakeEvent = {
      label: 'person',
      sub_label: null,
      zones: [],
      end_time: null,
      has_clip: true,
      has_snapshot: true,
      top_score: null,
      false_positive: false,
      plus_id: null,
      retain_indefinitely: false,
      box: null,
      data: { box: [0.4, 0.5, 0.1, 0.2], region: [0.3, 0.4, 0.3, 0.3], score: 0.8, top_score: 0.9, type: 'object' },
      ...event,
    };
    this.events.push(stored);
    return stored;
  }

  /**
   * Frigate has moved the segments of `camera` for `[start, end]` out of its cache: clips of it can be made, and
   * `/api/<camera>/recordings` lists it as segments of at most SEGMENT_SECONDS (Frigate's `segment_time`).
   */
  addRecording(camera: string, start: number, end: number): void {
    this.recordings.set(camera, [...(this.recordings.get(camera) ?? []), [start, end]]);
  }

  /** The camera's recorded spans as Frigate's Recordings rows (`frigate/models.py`'s selected columns). */
  private segments(camera: string): Array<Record<string, number | string>> {
    return (this.recordings.get(camera) ?? []).flatMap(([start, end]) => {
      const rows: Array<Record<string, number | string>> = [];
      for (let s = start; s < end; s += SEGMENT_SECONDS) {
        const e = Math.min(end, s + SEGMENT_SECONDS);
        const id = `${s}-${createHash('sha1').update(`${camera}/${s}`).digest('hex').slice(0, 6)}`;
        rows.push({ id, start_time: s, end_time: e, segment_size: 0.42, motion: 120, objects: 1, duration: e - s });
      }
      return rows;
    });
  }

  /**
   * `GET /api/<camera>/recordings` (`frigate/api/record.py`): the segments with `end_time >= after` and
   * `start_time <= before`, ordered by start_time; without a bound Frigate uses the last hour (fixed at its start;
   * here at the request).
   */
  private listRecordings(camera: string, params: URLSearchParams, json: (status: number, body: unknown) => void): void {
    const now = Date.now() / 1000;
    const after = Number(params.get('after') ?? now - 3600);
    const before = Number(params.get('before') ?? now);
    if (!Number.isFinite(after) || !Number.isFinite(before)) {
      return json(422, {
        detail: [{ loc: ['query', 'after'], msg: 'Input should be a valid number', type: 'float_parsing' }],
      });
    }
    const rows = this.segments(camera)
      .filter((row) => (row.end_time as number) >= after && (row.start_time as number) <= before)
      .sort((a, b) => (a.start_time as number) - (b.start_time as number));
    json(200, rows);
  }

  /** Publishes `<prefix>/events` `{type, before, after}` for a stored event, `after` in the MQTT shape. */
  async publishEvent(type: 'new' | 'update' | 'end', id: string): Promise<void> {
    const event = this.events.find((e) => e.id === id);
    if (!event) throw new Error(`no event ${id}`);
    const after = mqttEvent(event);
    await this.publish(`${this.prefix}/events`, { type, before: { ...after, end_time: null }, after });
  }

  /** Publishes a GenAI description on `<prefix>/tracked_object_update` (and stores it as Frigate does). */
  async publishDescription(id: string, description: string): Promise<void> {
    const event = this.events.find((e) => e.id === id);
    if (event) event.data.description = description;
    await this.publish(`${this.prefix}/tracked_object_update`, {
      type: 'description',
      id,
      description,
      camera: event?.camera,
    });
  }

  /** Publishes a review item with GenAI metadata on `<prefix>/reviews`. */
  async publishReviewSummary(reviewId: string, camera: string, detections: string[], summary: string): Promise<void> {
    const after = {
      id: reviewId,
      camera,
      start_time: 0,
      end_time: 1,
      severity: 'alert',
      thumb_path: `/media/frigate/clips/review/thumb-${camera}-${reviewId}.webp`,
      data: {
        detections,
        objects: ['person'],
        sub_labels: [],
        zones: [],
        audio: [],
        metadata: { title: 'Activity', scene: `${summary} (scene)`, shortSummary: summary },
      },
    };
    await this.publish(`${this.prefix}/reviews`, { type: 'genai', before: after, after });
  }

  /** Publishes raw bytes on a topic (malformed payloads). */
  async publishRaw(topic: string, payload: string): Promise<void> {
    if (!this.mqttClient) throw new Error('the fake has no broker');
    await this.mqttClient.publishAsync(topic, payload);
  }

  private async publish(topic: string, payload: unknown): Promise<void> {
    await this.publishRaw(topic, JSON.stringify(payload));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const path = decodeURIComponent(url.pathname);
    this.requests.push({
      path,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization,
      cookie: req.headers.cookie,
    });
    const auth = this.options.auth;
    if (auth && path === '/api/login' && req.method === 'POST') return this.login(req, res, auth);
    if (auth && !this.authorized(req, res, auth)) return;
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const bytes = (type: string, body: Buffer) => {
      res.writeHead(200, { 'content-type': type, 'content-length': body.length });
      res.end(body);
    };
    if (path === '/api/version') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('0.16.0-fake');
      return;
    }
    if (path === '/api/config') {
      const cameras = Object.fromEntries(
        Object.entries(this.cameras).map(([name, camera]) => [
          name,
          {
            name,
            enabled: true,
            objects: { track: camera.track ?? ['person'], filters: {} },
            record: { enabled: true },
          },
        ]),
      );
      return json(200, { mqtt: { topic_prefix: this.prefix }, cameras });
    }
    if (path === '/api/events') return this.listEvents(url.searchParams, json);
    const recordings = /^\/api\/([^/]+)\/recordings$/.exec(path);
    if (recordings) return this.listRecordings(recordings[1], url.searchParams, json);
    const clipByTime = /^\/api\/([^/]+)\/start\/([\d.]+)\/end\/([\d.]+)\/clip\.mp4$/.exec(path);
    if (clipByTime) {
      const [, camera, start, end] = clipByTime;
      if (!this.covered(camera, Number(start), Number(end))) return json(400, NO_RECORDINGS);
      return bytes('video/mp4', await clipBytes(Number(end) - Number(start), `${camera} ${start}-${end}`));
    }
    const eventMedia = /^\/api\/events\/([^/]+)\/(snapshot\.jpg|clip\.mp4)$/.exec(path);
    if (eventMedia) {
      const [, id, what] = eventMedia;
      const event = this.events.find((e) => e.id === id);
      if (!event) return json(404, { success: false, message: 'Event not found' });
      if (what === 'snapshot.jpg') {
        if (!event.has_snapshot) return json(404, { success: false, message: 'Snapshot not available' });
        return bytes('image/jpeg', await snapshotBytes());
      }
      if (!event.has_clip) return json(404, { success: false, message: 'Clip not available' });
      const end = event.end_time ?? Date.now() / 1000;
      if (!this.covered(event.camera, event.start_time, end)) return json(400, NO_RECORDINGS);
      return bytes('video/mp4', await clipBytes(end - event.start_time));
    }
    json(404, { detail: 'Not Found' });
  }

  /** Frigate's Recordings query: a segment starting or ending inside the window, or spanning it. */
  private covered(camera: string, start: number, end: number): boolean {
    return (this.recordings.get(camera) ?? []).some(
      ([s, e]) => (s >= start && s <= end) || (e >= start && e <= end) || (start > s && end < e),
    );
  }

  private listEvents(params: URLSearchParams, json: (status: number, body: unknown) => void): void {
    const number = (name: string) => {
      const raw = params.get(name);
      return raw === null ? undefined : Number(raw);
    };
    const limit = number('limit') ?? 100;
    const after = number('after');
    const before = number('before');
    if (![limit, after ?? 0, before ?? 0].every(Number.isFinite) || !Number.isInteger(limit)) {
      return json(422, { detail: [{ loc: ['query'], msg: 'invalid number', type: 'float_parsing' }] });
    }
    const camera = params.get('camera') ?? 'all';
    const found = this.events
      .filter((e) => camera === 'all' || e.camera === camera)
      .filter((e) => !after || e.start_time > after)
      .filter((e) => !before || e.start_time < before)
      // Frigate's `sort`: date_asc, or date_desc (the default).
      .sort((a, b) => (params.get('sort') === 'date_asc' ? a.start_time - b.start_time : b.start_time - a.start_time))
      .slice(0, limit);
    json(200, found);
  }
}

/** The event as `<prefix>/events` carries it: zones as current/entered zones, detection fields at the top level. */
function mqttEvent(event: FakeEvent): Record<string, unknown> {
  const data = event.data;
  return {
    id: event.id,
    camera: event.camera,
    frame_time: event.end_time ?? event.start_time,
    snapshot: { frame_time: event.start_time, box: [415, 489, 528, 700], area: 12728, region: [260, 446, 660, 846] },
    label: event.label,
    sub_label: event.sub_label === null ? null : [event.sub_label, 0.79],
    top_score: data.top_score ?? null,
    false_positive: false,
    start_time: event.start_time,
    end_time: event.end_time,
    score: data.score ?? null,
    box: [424, 500, 536, 712],
    area: 23744,
    ratio: 2.1,
    region: [264, 450, 667, 853],
    current_zones: event.zones.slice(-1),
    entered_zones: event.zones,
    thumbnail: null,
    has_snapshot: event.has_snapshot,
    has_clip: event.has_clip,
    active: true,
    stationary: false,
    motionless_count: 0,
    position_changes: 1,
    attributes: {},
    current_attributes: [],
  };
}

/** What the fake's camera sees: a real photo of people, panned (so a detector finds a person, as on a porch). */
const SCENE = { source: fixtureImage('person_multi_det.jpg'), fps: 5, width: 320, height: 240 };

let snapshot: Promise<Buffer> | undefined;

/** A real JPEG: the first frame of the camera's video. */
function snapshotBytes(): Promise<Buffer> {
  snapshot ??= makeTestVideo({ ...SCENE, seconds: 1 }).then((file) => firstFrameJpeg(file));
  return snapshot;
}

/** Frigate's `record.segment_time` default: recordings are segments of 10 s. */
const SEGMENT_SECONDS = 10;

const stamped = new Map<string, Promise<string>>();

/**
 * A real MP4 of the camera about as long as the window (1–4 s). With `window`, its bytes are that window's (the video
 * remuxed with the window as its title, as Frigate's clips of different times differ): the same window, the same
 * bytes.
 */
async function clipBytes(seconds: number, window?: string): Promise<Buffer> {
  const length = Math.min(4, Math.max(1, Math.round(seconds)));
  const video = await makeTestVideo({ ...SCENE, seconds: length });
  if (window === undefined) return readFile(video);
  let file = stamped.get(window);
  if (!file) {
    file = (async () => {
      const out = path.join(await testMediaDir(), `clip-${createHash('sha1').update(window).digest('hex')}.mp4`);
      await runFfmpeg(['-i', video, '-c', 'copy', '-metadata', `title=${window}`, '-movflags', '+faststart', out]);
      return out;
    })();
    stamped.set(window, file);
    file.catch(() => stamped.delete(window));
  }
  return readFile(await file);
}
