import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { answering, serveCameraRules, type ServedCameraRules } from '../testing/serve-app.js';
import { FakeFrigate } from '../testing/fake-frigate.js';
import { FrigateRecorder, toRecordingSegment } from './frigate-recorder.js';
import { MediaNotReadyError } from './recorder.js';

const T0 = 1_767_000_000;
let frigate: FakeFrigate;
let recorder: FrigateRecorder;
let served: ServedCameraRules;

beforeAll(async () => {
  frigate = new FakeFrigate({ front_door: { track: ['person', 'car'] }, garage: {} });
  await frigate.start();
  recorder = new FrigateRecorder({ url: frigate.url, token: 's3cret-token', timeoutMs: 5000 });
  served = await serveCameraRules({ recorder, search: answering(), alerts: answering() });
  frigate.addEvent({ id: `${T0 + 10}.1-aaaaaa`, camera: 'front_door', start_time: T0 + 10, end_time: T0 + 20 });
  frigate.addEvent({
    id: `${T0 + 30}.1-bbbbbb`,
    camera: 'front_door',
    label: 'car',
    sub_label: 'delivery van',
    zones: ['driveway', 'street'],
    start_time: T0 + 30,
    end_time: T0 + 41,
  });
  frigate.addEvent({ id: `${T0 + 50}.1-cccccc`, camera: 'front_door', start_time: T0 + 50, has_snapshot: false });
  frigate.addEvent({ id: `${T0 + 60}.1-dddddd`, camera: 'garage', start_time: T0 + 60 });
});

afterAll(async () => {
  await served?.close();
  await frigate?.close();
});

describe('the Frigate recorder', () => {
  it("lists /api/config's cameras with objects.track (Frigate's default person where none is set)", async () => {
    const res = await fetch(`${served.url}/cameras`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { name: 'front_door', labels: ['person', 'car'] },
      { name: 'garage', labels: ['person'] },
    ]);
    expect(frigate.requests.at(-1)).toMatchObject({ path: '/api/config', authorization: 'Bearer s3cret-token' });
  });

  it("lists a camera's events newest first through /api/events with camera, after and limit", async () => {
    const res = await fetch(`${served.url}/events?camera=front_door&after=${T0 + 10}&limit=5`);
    expect(res.status).toBe(200);
    const events = (await res.json()) as any[];
    expect(events.map((e) => e.id)).toEqual([`${T0 + 50}.1-cccccc`, `${T0 + 30}.1-bbbbbb`]);
    expect(events[1]).toEqual({
      id: `${T0 + 30}.1-bbbbbb`,
      camera: 'front_door',
      label: 'car',
      sub_label: 'delivery van',
      zones: ['driveway', 'street'],
      start_time: T0 + 30,
      end_time: T0 + 41,
      has_clip: true,
      has_snapshot: true,
      // The column is null in current Frigate; the score is in data.
      top_score: 0.9,
      data: { box: [0.4, 0.5, 0.1, 0.2], region: [0.3, 0.4, 0.3, 0.3], score: 0.8, top_score: 0.9, type: 'object' },
    });
    expect(frigate.requests.at(-1)).toMatchObject({
      path: '/api/events',
      query: { camera: 'front_door', after: String(T0 + 10), limit: '5' },
    });
    const oldest = await recorder.events({ camera: 'front_door', limit: 2, oldestFirst: true });
    expect(oldest.map((e) => e.id)).toEqual([`${T0 + 10}.1-aaaaaa`, `${T0 + 30}.1-bbbbbb`]);
    expect(frigate.requests.at(-1)?.query).toMatchObject({ sort: 'date_asc', limit: '2' });
    const before = await (await fetch(`${served.url}/events?camera=front_door&before=${T0 + 30}`)).json();
    expect((before as any[]).map((e) => e.id)).toEqual([`${T0 + 10}.1-aaaaaa`]);
  });

  it('waits for Frigate to move the recording out of its cache before a clip by time can be had', async () => {
    await expect(recorder.clip('front_door', T0 + 30, T0 + 41)).rejects.toThrow(MediaNotReadyError);
    await expect(recorder.clip('front_door', T0 + 30, T0 + 41)).rejects.toThrow(/No recordings found/);
    frigate.addRecording('front_door', T0 + 25, T0 + 45);
    const clip = await recorder.clip('front_door', T0 + 30, T0 + 41);
    expect(clip.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(frigate.requests.at(-1)?.path).toBe(`/api/front_door/start/${T0 + 30}/end/${T0 + 41}/clip.mp4`);
  });

  it("lists a camera's finished recordings through /api/<camera>/recordings with both bounds, oldest first", async () => {
    frigate.addRecording('garage', T0 + 100, T0 + 125);
    frigate.addRecording('garage', T0 + 200, T0 + 210);
    // Frigate's bounds overlap: end_time >= after, start_time <= before (a segment across either is listed).
    const listed = await recorder.recordings('garage', T0 + 115, T0 + 200);
    expect(listed).toEqual([
      expect.objectContaining({ start_time: T0 + 110, end_time: T0 + 120, duration: 10 }),
      expect.objectContaining({ start_time: T0 + 120, end_time: T0 + 125, duration: 5 }),
      expect.objectContaining({ start_time: T0 + 200, end_time: T0 + 210, segment_size: 0.42 }),
    ]);
    expect(listed.every((segment) => typeof segment.id === 'string')).toBe(true);
    expect(frigate.requests.at(-1)).toMatchObject({
      path: '/api/garage/recordings',
      query: { after: String(T0 + 115), before: String(T0 + 200) },
      authorization: 'Bearer s3cret-token',
    });
    // Rows Frigate would never send are dropped, not guessed at.
    expect(
      [
        { id: 'a', start_time: 1, end_time: 2 },
        { id: 'b', start_time: 2 },
        { start_time: 1, end_time: 2 },
        { id: 'c', start_time: 3, end_time: 1 },
        'row',
      ].map((row) => toRecordingSegment(row)?.id),
    ).toEqual(['a', undefined, undefined, undefined, undefined]);
  });

  it("fetches an event's snapshot as a real JPEG, and says when it has none", async () => {
    const [withSnapshot, without] = await Promise.all([
      recorder.events({ camera: 'front_door', limit: 1, before: T0 + 31 }),
      recorder.events({ camera: 'front_door', limit: 1 }),
    ]);
    const jpeg = await recorder.snapshot(withSnapshot[0]);
    expect(jpeg.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    await expect(recorder.snapshot(without[0])).rejects.toThrow(/Snapshot not available/);
  });

  it('answers 502 with a clear detail while Frigate does not answer, and recovers when it is back', async () => {
    await frigate.stop();
    try {
      for (const path of ['/cameras', '/events?camera=front_door']) {
        const res = await fetch(`${served.url}${path}`);
        expect(res.status).toBe(502);
        const body = (await res.json()) as { detail: string };
        expect(body.detail).toMatch(
          new RegExp(`^Frigate at ${frigate.url} does not answer: connection .*ECONNREFUSED`),
        );
        expect(body.detail).not.toContain('s3cret');
      }
      const health = (await (await fetch(`${served.url}/health`)).json()) as any;
      expect(health).toMatchObject({ status: 'degraded', recorder: { kind: 'frigate', reachable: false } });
    } finally {
      await frigate.start();
    }
    expect((await fetch(`${served.url}/cameras`)).status).toBe(200);
    const health = (await (await fetch(`${served.url}/health`)).json()) as any;
    expect(health).toMatchObject({ status: 'healthy', recorder: { reachable: true } });
  });

  it('reports an error status from Frigate as unavailable, naming the path and status', async () => {
    const broken = new FrigateRecorder({ url: `${frigate.url}/nowhere`, timeoutMs: 5000 });
    await expect(broken.cameras()).rejects.toThrow(
      `Frigate at ${frigate.url}/nowhere answered /api/config with HTTP 404`,
    );
  });
});

describe("Frigate's authenticated port (user and password)", () => {
  let secured: FakeFrigate;
  const credentials = { user: 'argus', password: 'correct horse battery' };

  beforeAll(async () => {
    // A session of 100 s is always within Frigate's default refresh window: every answer refreshes the cookie.
    secured = new FakeFrigate({ front_door: {} }, { auth: { ...credentials, sessionSeconds: 100 } });
    await secured.start();
    secured.addEvent({ id: `${T0}.1-secure`, camera: 'front_door', start_time: T0, end_time: T0 + 5 });
  });

  afterAll(async () => {
    await secured?.close();
  });

  it('logs in once with /api/login, sends the session cookie, follows refreshed cookies, logs in again after a 401', async () => {
    const recorder = new FrigateRecorder({ url: secured.url, credentials, timeoutMs: 5000 });
    // Concurrent first requests share one login.
    const [cameras, events] = await Promise.all([
      recorder.cameras(),
      recorder.events({ camera: 'front_door', limit: 10 }),
    ]);
    expect(cameras).toEqual([{ name: 'front_door', labels: ['person'] }]);
    expect(events.map((e) => e.id)).toEqual([`${T0}.1-secure`]);
    expect(secured.logins).toEqual([{ user: 'argus', status: 200 }]);
    const sent = secured.requests.filter((r) => r.path === '/api/events').map((r) => r.cookie);
    expect(sent).toEqual([expect.stringMatching(/^frigate_token=[\w-]+\.[\w-]+\.[\w-]+$/)]);

    // Each answer refreshed the cookie (Set-Cookie): the next request carries the latest one.
    const refreshed = secured.requests.at(-1)?.issued;
    expect(refreshed).toEqual(expect.any(String));
    await recorder.cameras();
    expect(secured.requests.at(-1)).toMatchObject({ path: '/api/config', cookie: `frigate_token=${refreshed}` });
    expect(secured.logins).toHaveLength(1);

    // Frigate no longer accepts the session (its secret changed): 401, a new login, the request again.
    secured.endSessions();
    expect(await recorder.reachability()).toMatchObject({ reachable: true });
    expect(secured.logins).toEqual([
      { user: 'argus', status: 200 },
      { user: 'argus', status: 200 },
    ]);
  });

  it("shares its login without tying it to the first request's signal: another request's abort fails only that one", async () => {
    const recorder = new FrigateRecorder({ url: secured.url, credentials, timeoutMs: 5000 });
    const abort = new AbortController();
    abort.abort();
    const [aborted, cameras] = await Promise.allSettled([
      recorder.events({ camera: 'front_door', limit: 10 }, abort.signal),
      recorder.cameras(),
    ]);
    expect(aborted.status).toBe('rejected');
    expect(cameras).toEqual({ status: 'fulfilled', value: [{ name: 'front_door', labels: ['person'] }] });
  });

  it('answers 502 saying the login was refused, without the password; 502 naming the 401 without credentials', async () => {
    const wrong = new FrigateRecorder({
      url: secured.url,
      credentials: { user: 'argus', password: 'not it' },
      timeoutMs: 5000,
    });
    const served = await serveCameraRules({ recorder: wrong, search: answering(), alerts: answering() });
    try {
      const res = await fetch(`${served.url}/cameras`);
      expect(res.status).toBe(502);
      const { detail } = (await res.json()) as { detail: string };
      expect(detail).toBe(
        `Frigate at ${secured.url} refused the login of user argus (check CAMERA_RULES_FRIGATE_USER and _PASSWORD)`,
      );
      expect(secured.logins.at(-1)).toEqual({ user: 'argus', status: 401 });
    } finally {
      await served.close();
    }
    const anonymous = new FrigateRecorder({ url: secured.url, timeoutMs: 5000 });
    await expect(anonymous.cameras()).rejects.toThrow(`Frigate at ${secured.url} answered /api/config with HTTP 401`);
  });
});
