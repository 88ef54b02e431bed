import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CameraRule, CameraWatcher } from '../../operator/api/index.js';
import { loadControllerSettings } from '../../operator/config.js';
import { openEmbeddedControlPlane, type ControlPlaneHandle } from '../../operator/embedded-control-plane.js';
import { fixtureImage, makeTestVideo } from '../../test/support/media.js';
import { mosquittoMissing, startMosquitto } from '../../test/support/mosquitto.js';
import { startTestBroker, type TestBroker } from '../../test/support/mqtt-broker.js';
import { createLogger } from '../lib/log/index.js';
import { loadCameraRulesConfig } from './config.js';
import { startCameraRules, type RunningCameraRules } from './main.js';
import { FakeFrigate } from './testing/fake-frigate.js';
import { startPeerServices, type PeerServices } from './testing/services.js';
import { watcherObjectName } from './watchers/watcher-book.js';

/**
 * camera-rules as `npm start` runs it — the service over the embedded control plane with its CameraWatcher controller
 * and in-process workloads — against the Frigate-compatible fake on a real broker (mosquitto where installed, else
 * aedes) and real dataprep and alert-dispatch.
 */
const NS = 'default';
const logger = createLogger({ service: 'camera-rules-e2e', level: 'error', json: true });
logger.silent = true;

let dataDir: string;
let peers: PeerServices;
let broker: TestBroker;
let frigate: FakeFrigate;
let plane: ControlPlaneHandle;
let service: RunningCameraRules;
/** Events of the test, each starting after the watcher was created (a new watcher starts there). */
let t0: number;

async function startAll(): Promise<void> {
  plane = await openEmbeddedControlPlane({ dataDir, namespace: NS, logger, config: loadControllerSettings({}) });
  service = await startCameraRules(
    loadCameraRulesConfig({
      ARGUS_DATA_DIR: dataDir,
      CAMERA_RULES_PORT: '0',
      CAMERA_RULES_FRIGATE_URL: frigate.url,
      MQTT_BROKER: broker.url,
      CAMERA_RULES_DATAPREP_URL: peers.dataprep,
      CAMERA_RULES_ALERT_DISPATCH_URL: peers.alertDispatch,
      // Catch-ups at start and on each (re)subscription only: what the test sees comes from the feed.
      CAMERA_RULES_WATCHER_POLL_SECONDS: '3600',
    }),
    plane.controlPlane,
    logger,
  );
  await plane.startControllers();
}

async function stopAll(): Promise<void> {
  await plane.stopWork();
  await service.close();
  await plane.close();
}

const post = (path: string, body: unknown) =>
  fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Resolves with the resource once `predicate` holds (watching the store: no polling, no timing). */
async function when<K extends 'CameraRule' | 'CameraWatcher'>(
  kind: K,
  predicate: (object: K extends 'CameraRule' ? CameraRule : CameraWatcher) => boolean,
): Promise<K extends 'CameraRule' ? CameraRule : CameraWatcher> {
  type Found = K extends 'CameraRule' ? CameraRule : CameraWatcher;
  const store = plane.controlPlane.resources;
  let resolveFound!: (found: Found) => void;
  const found = new Promise<Found>((resolve) => (resolveFound = resolve));
  const check = (object: Found) => {
    if (predicate(object)) resolveFound(object);
  };
  const watch = await store.watch(kind, NS, (event) => check(event.object as unknown as Found));
  for (const object of await store.list(kind, NS)) check(object as unknown as Found);
  const result = await found;
  await watch.stop();
  return result;
}

const ruleResult = (rule: CameraRule, eventId: string) => rule.status?.results?.find((r) => r.eventId === eventId);
const settled = (eventId: string) =>
  when('CameraRule', (rule) => rule.spec.id === 'index people' && ruleResult(rule, eventId)?.state === 'succeeded');

/** A person event on the porch camera, its recording final, ended and published as Frigate does. */
async function personEvent(id: string, start: number): Promise<void> {
  frigate.addRecording('front_door', start - 1, start + 6);
  frigate.addEvent({ id, camera: 'front_door', zones: ['porch'], start_time: start, end_time: start + 3 });
  await frigate.publishEvent('new', id);
  await frigate.publishEvent('end', id);
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-e2e-'));
  peers = await startPeerServices();
  broker = mosquittoMissing() ? await startTestBroker() : await startMosquitto();
  frigate = new FakeFrigate({ front_door: { track: ['person'] }, driveway: {} }, { broker: broker.url });
  await frigate.start();
  await startAll();
}, 180_000);

afterAll(async () => {
  await stopAll().catch(() => undefined);
  await frigate?.close();
  await broker?.close();
  await peers?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('camera-rules end to end (embedded control plane, Frigate fake, real broker, dataprep)', () => {
  const first = 'e2e-first';

  it('enables a watcher, and an end event sends its clip to search through the matching rule', async () => {
    expect((await post('/rules/', { id: 'index people', label: 'person', action: 'add_to_search' })).status).toBe(200);
    expect((await post('/watchers/enable', { cameras: [{ front_door: true }] })).status).toBe(200);
    const watching = await when('CameraWatcher', (w) => w.status?.phase === 'Watching');
    t0 = Date.parse(watching.metadata.creationTimestamp!) / 1000 + 1;

    await personEvent(first, t0);
    await settled(first);
    const responses = (await (await fetch(`${service.url}/rules/search-responses/`)).json()) as any;
    expect(responses['index people']).toEqual([
      expect.objectContaining({ event_id: first, status: 'succeeded', bucket_name: 'camera-events' }),
    ]);
    const found = (await (
      await fetch(`${peers.dataprep}/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'a person', tags: [`event:${first}`], bucket_name: 'camera-events' }),
      })
    ).json()) as any;
    expect(found.hits[0]).toMatchObject({
      video_id: responses['index people'][0].video_id,
      tags: expect.arrayContaining(['camera:front_door', 'label:person', 'zone:porch', 'source:frigate']),
    });
    const watcher = await when('CameraWatcher', (w) => w.status?.lastEventId === first);
    expect(watcher.status).toMatchObject({ eventsHandled: 1, lastEventStart: t0 });
  }, 120_000);

  it('does not process the same event twice: repeated, or after a restart of everything', async () => {
    await frigate.publishEvent('end', first);
    // Messages are handled in order: once the next event settled, the repeat was seen (and did nothing).
    await personEvent('e2e-second', t0 + 10);
    await settled('e2e-second');

    await stopAll();
    await startAll();
    await personEvent('e2e-third', t0 + 20);
    await settled('e2e-third');
    const rule = await when('CameraRule', (r) => r.spec.id === 'index people');
    expect(rule.status?.count).toBe(3);
    expect(rule.status?.results?.map((r) => r.eventId)).toEqual(['e2e-third', 'e2e-second', first]);
    const watcher = await when('CameraWatcher', (w) => w.status?.lastEventId === 'e2e-third');
    expect(watcher.status?.eventsHandled).toBe(3);
  }, 120_000);

  it('answers 502 while Frigate is down; the watcher gets the clip once Frigate is back', async () => {
    await frigate.stop();
    const down = await fetch(`${service.url}/cameras`);
    expect(down.status).toBe(502);
    expect(((await down.json()) as { detail: string }).detail).toMatch(/^Frigate at .* does not answer/);
    // The event arrives over MQTT while Frigate's API is down: claimed, its clip asked for again with back-off.
    frigate.addRecording('front_door', t0 + 29, t0 + 36);
    frigate.addEvent({ id: 'e2e-fourth', camera: 'front_door', start_time: t0 + 30, end_time: t0 + 33 });
    await frigate.publishEvent('end', 'e2e-fourth');
    await when('CameraRule', (rule) => ruleResult(rule, 'e2e-fourth')?.state === 'pending');
    await frigate.start();
    await settled('e2e-fourth');
    expect((await fetch(`${service.url}/cameras`)).status).toBe(200);
  }, 120_000);

  it("sends the camera's new recordings to search on their own, once each, also across a restart", async () => {
    // The driveway's watcher, disabled, its recordings said to have reached search two minutes ago: enabled, it goes
    // on from there (as after a restart), with no rule involved.
    const now = Math.floor(Date.now() / 1000);
    const store = plane.controlPlane.resources;
    const name = watcherObjectName('driveway');
    const created = await store.create('CameraWatcher', {
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'CameraWatcher',
      metadata: { name, namespace: NS },
      spec: { camera: 'driveway', enabled: false },
    });
    await store.updateStatus('CameraWatcher', { ...created, status: { lastRecordingEnd: now - 120 } });
    // Frigate's Recordings: 30 s (three segments, one clip) and, after a gap, 10 s; one older than the position.
    frigate.addRecording('driveway', now - 200, now - 190);
    frigate.addRecording('driveway', now - 100, now - 70);
    frigate.addRecording('driveway', now - 50, now - 40);
    expect((await post('/watchers/enable', { cameras: [{ driveway: true }] })).status).toBe(200);
    const first = await when('CameraWatcher', (w) => w.metadata.name === name && w.status?.recordingsIndexed === 2);
    expect(first.status?.lastRecordingEnd).toBe(now - 40);

    // A restart of everything, and a new recording meanwhile: only the new one goes to search.
    await stopAll();
    frigate.addRecording('driveway', now - 30, now - 20);
    await startAll();
    const after = await when('CameraWatcher', (w) => w.metadata.name === name && w.status?.recordingsIndexed === 3);
    expect(after.status?.lastRecordingEnd).toBe(now - 20);
    const clips = frigate.requests.filter((r) => r.path.startsWith('/api/driveway/start/')).map((r) => r.path);
    expect(clips).toEqual([
      `/api/driveway/start/${now - 100}/end/${now - 70}/clip.mp4`,
      `/api/driveway/start/${now - 50}/end/${now - 40}/clip.mp4`,
      `/api/driveway/start/${now - 30}/end/${now - 20}/clip.mp4`,
    ]);
    // Each listing named both bounds (Frigate's own defaults are fixed when it starts).
    const listings = frigate.requests.filter((r) => r.path === '/api/driveway/recordings');
    expect(listings.length).toBeGreaterThan(0);
    expect(listings.every((r) => r.query.after !== undefined && r.query.before !== undefined)).toBe(true);

    // Search finds each recording once, tagged with its camera, Frigate and its start.
    const found = (await (
      await fetch(`${peers.dataprep}/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'a person',
          tags: ['camera:driveway', 'source:frigate'],
          tags_match: 'all',
          bucket_name: 'camera-events',
          top_k: 50,
        }),
      })
    ).json()) as { hits: Array<{ video_id: string; tags: string[] }> };
    const recordings = new Map(
      found.hits.map((hit) => [hit.video_id, hit.tags.find((t) => t.startsWith('recording:'))]),
    );
    expect([...recordings.values()].sort()).toEqual(
      [now - 100, now - 50, now - 30].map((start) => `recording:${start}`).sort(),
    );
    await post('/watchers/enable', { cameras: [{ driveway: false }] });
  }, 180_000);
});

describe('the directory recorder end to end: a new segment, dataprep’s detections, the rule', () => {
  let dirData: string;
  let dirPlane: ControlPlaneHandle;
  let dirService: RunningCameraRules;

  beforeAll(async () => {
    dirData = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-e2e-dir-'));
    dirPlane = await openEmbeddedControlPlane({
      dataDir: dirData,
      namespace: NS,
      logger,
      config: loadControllerSettings({}),
    });
    dirService = await startCameraRules(
      loadCameraRulesConfig({
        ARGUS_DATA_DIR: dirData,
        CAMERA_RULES_PORT: '0',
        CAMERA_RULES_DATAPREP_URL: peers.dataprep,
        CAMERA_RULES_ALERT_DISPATCH_URL: peers.alertDispatch,
        CAMERA_RULES_WATCHER_POLL_SECONDS: '3600',
      }),
      dirPlane.controlPlane,
      logger,
    );
    await dirPlane.startControllers();
  }, 60_000);

  afterAll(async () => {
    await dirPlane?.stopWork();
    await dirService?.close();
    await dirPlane?.close();
    if (dirData) await rm(dirData, { recursive: true, force: true });
  });

  it('analyses the final segment through dataprep and fires the person rule on its detection', async () => {
    const res = await fetch(`${dirService.url}/rules/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'people in recordings', label: 'person', action: 'summarize', camera: 'porch' }),
    });
    expect(res.status).toBe(200);
    // Two segments of the porch camera, ten minutes ahead (after the watcher's creation, where a new watcher starts):
    // the first is final, since the second follows it.
    const start = Math.ceil(Date.now() / 1000) + 600;
    const people = await makeTestVideo({
      source: fixtureImage('person_multi_det.jpg'),
      seconds: 2,
      fps: 5,
      width: 320,
      height: 240,
    });
    for (const at of [start, start + 10]) {
      const iso = new Date(at * 1000).toISOString();
      const dir = path.join(dirData, 'camera-rules', 'recordings', iso.slice(0, 10), iso.slice(11, 13), 'porch');
      await mkdir(dir, { recursive: true });
      await copyFile(people, path.join(dir, `${iso.slice(14, 16)}.${iso.slice(17, 19)}.mp4`));
    }
    expect(await (await fetch(`${dirService.url}/cameras`)).json()).toEqual([{ name: 'porch', labels: ['person'] }]);
    expect(await (await fetch(`${dirService.url}/events?camera=porch`)).json()).toEqual([]);

    const enabled = await fetch(`${dirService.url}/watchers/enable`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cameras: [{ porch: true }] }),
    });
    expect(enabled.status).toBe(200);
    const store = dirPlane.controlPlane.resources;
    const eventId = `${start}-porch-person`;
    let found!: (rule: CameraRule) => void;
    const settledRule = new Promise<CameraRule>((resolve) => (found = resolve));
    const watch = await store.watch('CameraRule', NS, ({ object }) => {
      if (object.status?.results?.some((x) => x.eventId === eventId && x.state === 'succeeded')) found(object);
    });
    const rule = await settledRule;
    await watch.stop();
    expect(rule.status?.results?.[0]).toMatchObject({ eventId, state: 'succeeded' });
    const responses = (await (await fetch(`${dirService.url}/rules/responses/`)).json()) as any;
    expect(responses['people in recordings'][eventId]).toMatch(/A person on camera porch/);
    // The listing now holds the analysed segment's events; the newest segment waits for the next one.
    const events = (await (await fetch(`${dirService.url}/events?camera=porch`)).json()) as any[];
    expect(events.map((e) => e.id)).toEqual(expect.arrayContaining([eventId, `${start}-porch`]));
    expect(events.every((e) => e.start_time < start + 10)).toBe(true);
  }, 120_000);
});
