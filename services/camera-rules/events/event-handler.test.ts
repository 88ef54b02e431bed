import { watch } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '../../lib/log/index.js';
import { AlertDispatchSink } from '../actions/alert-sink.js';
import type { Sleep } from '../actions/retry.js';
import { DataprepSearchIndex } from '../actions/search-index.js';
import { OFFLINE_LABEL, OfflineSummarizer, VlmSummarizer, type Summarizer } from '../actions/summarizer.js';
import { ChatCompletionsClient } from '../../lib/llm/index.js';
import { startFakeChatCompletions } from '../../../test/support/fake-chat-completions.js';
import { FrigateRecorder } from '../recorder/frigate-recorder.js';
import { RuleBook } from '../rules/rule-book.js';
import { FakeFrigate } from '../testing/fake-frigate.js';
import { serveCameraRules, TEST_NAMESPACE, type ServedCameraRules } from '../testing/serve-app.js';
import { startPeerServices, type PeerServices } from '../testing/services.js';
import { EventHandler, type HandlerPolicies } from './event-handler.js';
import { EventNotes } from './event-notes.js';

const T0 = 1_767_100_000;
const POLICIES: HandlerPolicies = {
  media: { attempts: 3, baseDelayMs: 1000, maxDelayMs: 8000 },
  action: { attempts: 3, baseDelayMs: 500, maxDelayMs: 4000 },
};
const logger = createLogger({ service: 'camera-rules-test', level: 'error', json: true });
logger.silent = true;

let peers: PeerServices;
let frigate: FakeFrigate;
let app: ServedCameraRules & { store: import('../../../operator/drivers/embedded/index.js').EmbeddedResourceStore };
let notes: EventNotes;
let controlPlaneDir: string;
/** Waits the handler asked for, in order; `onSleep` runs at each (the test's way to change the world meanwhile). */
let sleeps: number[] = [];
let onSleep: (() => void) | undefined;
const sleep: Sleep = async (ms) => {
  sleeps.push(ms);
  onSleep?.();
};

function handler(
  overrides: { alertsUrl?: string; rules?: RuleBook; summarizer?: Summarizer; clock?: () => Date } = {},
): EventHandler {
  return new EventHandler({
    rules: overrides.rules ?? new RuleBook(app.store, TEST_NAMESPACE, logger),
    recorder: new FrigateRecorder({ url: frigate.url, timeoutMs: 5000 }),
    search: new DataprepSearchIndex({
      url: peers.dataprep,
      bucket: 'camera-events',
      timeoutMs: 120_000,
      frameInterval: 15,
    }),
    alerts: new AlertDispatchSink({ url: overrides.alertsUrl ?? peers.alertDispatch, timeoutMs: 5000 }),
    summarizer: overrides.summarizer ?? new OfflineSummarizer(),
    notes,
    alertTools: ['log_alert', 'capture_snapshot'],
    logger,
    policies: POLICIES,
    sleep,
    clock: overrides.clock,
    claimLeaseMs: 60_000,
  });
}

const addRule = async (rule: Record<string, unknown>) => {
  const res = await fetch(`${app.url}/rules/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  expect(res.status).toBe(200);
};

async function frigateEvent(id: string) {
  return (
    await new FrigateRecorder({ url: frigate.url, timeoutMs: 5000 }).events({ camera: 'front_door', limit: 100 })
  ).find((e) => e.id === id)!;
}

beforeAll(async () => {
  peers = await startPeerServices();
  frigate = new FakeFrigate({ front_door: { track: ['person', 'car'] } });
  await frigate.start();
  controlPlaneDir = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-handler-store-'));
  app = await serveCameraRules({ controlPlaneDir });
  notes = new EventNotes();
  await addRule({ id: 'index people', label: 'person', action: 'add_to_search', camera: 'front_door' });
  await addRule({ id: 'describe people', label: 'person', action: 'summarize' });
  await addRule({ id: 'people alert', label: 'person', action: 'alert', camera: 'front_door' });
  await addRule({ id: 'cars', label: 'car', action: 'alert' });
  await addRule({ id: 'people arriving', label: 'person', action: 'summarize', event_type: 'new' });
  await addRule({ id: 'other camera', label: 'person', action: 'alert', camera: 'garage' });
}, 180_000);

afterAll(async () => {
  await app?.close();
  await frigate?.close();
  await peers?.close();
  if (controlPlaneDir) await rm(controlPlaneDir, { recursive: true, force: true });
});

describe('an end event through the rules to dataprep and alert-dispatch', () => {
  const id = `${T0}.25-e2e001`;

  it('fires each matching rule once: the clip, once final, is indexed and found by search; summary; alert', async () => {
    frigate.addEvent({
      id,
      camera: 'front_door',
      zones: ['porch', 'driveway'],
      start_time: T0,
      end_time: T0 + 4,
    });
    notes.note(id, { description: 'A courier in a brown uniform leaves a parcel on the porch.' });
    // Frigate still has the segments in its cache: the first clip request is answered 400, and the recording lands
    // while the handler waits.
    sleeps = [];
    onSleep = () => frigate.addRecording('front_door', T0 - 2, T0 + 10);
    const snapshotWritten = new Promise<string>((resolve) => {
      const watcher = watch(peers.snapshotDir, (_event, name) => {
        if (name && /\.jpg$/.test(String(name))) {
          watcher.close();
          resolve(String(name));
        }
      });
    });
    const outcomes = await handler().handle('end', await frigateEvent(id));
    onSleep = undefined;
    expect(outcomes.sort((a, b) => a.ruleId.localeCompare(b.ruleId))).toEqual([
      { ruleId: 'describe people', state: 'succeeded', message: 'summary (offline)' },
      {
        ruleId: 'index people',
        state: 'succeeded',
        message: expect.stringMatching(/^clip .* indexed by dataprep: Uploaded/),
      },
      { ruleId: 'people alert', state: 'succeeded', message: expect.stringMatching(/alert sent to alert-dispatch/) },
    ]);
    expect(sleeps).toEqual([1000]);

    const search = (await (await fetch(`${app.url}/rules/search-responses/`)).json()) as any;
    expect(search['index people']).toEqual([
      {
        event_id: id,
        video_id: expect.any(String),
        bucket_name: 'camera-events',
        status: 'succeeded',
        message: expect.any(String),
      },
    ]);
    const videoId = search['index people'][0].video_id;
    const found = (await (
      await fetch(`${peers.dataprep}/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'a person at the door', tags: [`event:${id}`], bucket_name: 'camera-events' }),
      })
    ).json()) as any;
    expect(found.hits.length).toBeGreaterThan(0);
    expect(found.hits[0]).toMatchObject({ video_id: videoId, media_type: 'video' });
    expect(found.hits[0].tags).toEqual(
      expect.arrayContaining(['camera:front_door', 'label:person', `event:${id}`, 'zone:porch', 'zone:driveway']),
    );

    const responses = (await (await fetch(`${app.url}/rules/responses/`)).json()) as any;
    expect(responses['describe people'][id]).toMatch(new RegExp(`^${OFFLINE_LABEL.replace(/[()]/g, '\\$&')}`));
    expect(responses['describe people'][id]).toContain("Frigate's description: A courier in a brown uniform");
    expect(responses['describe people'][id]).toContain('zones porch, driveway');
    expect(responses['people alert'][id]).toBe('person on camera front_door matched rule people alert');
    expect(responses.cars).toEqual({});
    expect(responses['people arriving']).toEqual({});

    const written = await snapshotWritten;
    const jpeg = await readFile(path.join(peers.snapshotDir, written));
    expect(jpeg.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
  }, 180_000);

  it('does not process the same event twice: again, on another replica, or after a restart', async () => {
    const event = await frigateEvent(id);
    expect((await handler().handle('end', event)).map((o) => o.state)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    // A restart: the service and its store closed, opened again from the store's directory, a new handler.
    await app.close();
    app = await serveCameraRules({ controlPlaneDir });
    expect((await handler().handle('end', event)).map((o) => o.state)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    const rules = await (await fetch(`${app.url}/rules/index%20people`)).json();
    expect(rules).toMatchObject({ count: 1 });
    // Two replicas handling it at once.
    const replicas = await Promise.all([handler().handle('end', event), handler().handle('end', event)]);
    expect(replicas.flat().every((o) => o.state === 'duplicate')).toBe(true);
    expect(await (await fetch(`${app.url}/rules/index%20people`)).json()).toMatchObject({ count: 1 });
  });

  it('fires new-event rules on new, and nothing on update', async () => {
    const arriving = `${T0 + 100}.5-e2e002`;
    frigate.addEvent({ id: arriving, camera: 'front_door', start_time: T0 + 100, has_snapshot: false });
    expect(await handler().handle('update', await frigateEvent(arriving))).toEqual([]);
    const outcomes = await handler().handle('new', await frigateEvent(arriving));
    expect(outcomes).toEqual([{ ruleId: 'people arriving', state: 'succeeded', message: 'summary (offline)' }]);
    const responses = (await (await fetch(`${app.url}/rules/responses/`)).json()) as any;
    expect(responses['people arriving'][arriving]).toContain('(in progress)');
  });

  it('retries a failing action with back-off and says why it failed', async () => {
    const failing = `${T0 + 200}.5-e2e003`;
    frigate.addEvent({ id: failing, camera: 'front_door', label: 'car', start_time: T0 + 200, end_time: T0 + 201 });
    sleeps = [];
    const outcomes = await handler({ alertsUrl: 'http://127.0.0.1:1/api/v1' }).handle(
      'end',
      await frigateEvent(failing),
    );
    expect(outcomes).toEqual([
      {
        ruleId: 'cars',
        state: 'failed',
        message: expect.stringMatching(
          /^alert-dispatch does not answer: connection to 127\.0\.0\.1:1 failed \(ECONNREFUSED\) \(after 3 attempts\)$/,
        ),
      },
    ]);
    expect(sleeps).toEqual([500, 1000]);
    const responses = (await (await fetch(`${app.url}/rules/responses/`)).json()) as any;
    expect(responses.cars[failing]).toMatch(/^failed: alert-dispatch does not answer/);
    const stored = (await new RuleBook(app.store, TEST_NAMESPACE, logger).withResults()).find(
      (r) => r.rule.id === 'cars',
    );
    expect(stored?.results[0]).toMatchObject({ eventId: failing, state: 'failed', attempts: 3 });
  });

  it('indexes the snapshot when the clip never becomes final, saying so', async () => {
    const noClip = `${T0 + 300}.5-e2e004`;
    frigate.addEvent({ id: noClip, camera: 'front_door', start_time: T0 + 300, end_time: T0 + 303 });
    sleeps = [];
    const outcomes = await handler().handle('end', await frigateEvent(noClip));
    const indexed = outcomes.find((o) => o.ruleId === 'index people');
    expect(indexed).toEqual({
      ruleId: 'index people',
      state: 'succeeded',
      message: expect.stringMatching(
        /^snapshot \(no clip: Frigate has no clip .*No recordings found.*\(after 3 attempts\)\) indexed by dataprep/,
      ),
    });
    expect(sleeps.slice(0, 2)).toEqual([1000, 2000]);
    const search = (await (await fetch(`${app.url}/rules/search-responses/`)).json()) as any;
    expect(search['index people'].map((r: any) => r.event_id)).toEqual([noClip, id]);
  }, 120_000);

  it('summarizes with the VLM, and falls back to the labelled offline summary when the VLM fails', async () => {
    const vlm = await startFakeChatCompletions({ kind: 'content', content: ' A courier drops a parcel. ' });
    try {
      const summarizer = new VlmSummarizer(
        new ChatCompletionsClient({ baseUrl: vlm.baseUrl, model: 'tiny-vlm', timeoutMs: 5000 }),
        {
          maxTokens: 100,
          temperature: 0,
        },
      );
      const described = `${T0 + 400}.5-e2e005`;
      frigate.addEvent({ id: described, camera: 'garden', start_time: T0 + 400, end_time: T0 + 402 });
      const event = (
        await new FrigateRecorder({ url: frigate.url, timeoutMs: 5000 }).events({ camera: 'garden', limit: 10 })
      )[0];
      expect(await handler({ summarizer }).handle('end', event)).toEqual([
        { ruleId: 'describe people', state: 'succeeded', message: 'summary (vlm)' },
      ]);
      // The snapshot went to the model as an image, the detections as text.
      const sent = vlm.requests[0].body.messages[1].content;
      expect(sent[0].text).toContain('camera garden');
      expect(sent[1].image_url.url).toMatch(/^data:image\/jpeg;base64,\/9j\//);

      vlm.behaviour = { kind: 'status', status: 503 };
      const failed = `${T0 + 500}.5-e2e006`;
      frigate.addEvent({ id: failed, camera: 'garden', start_time: T0 + 500, end_time: T0 + 502 });
      const second = (
        await new FrigateRecorder({ url: frigate.url, timeoutMs: 5000 }).events({ camera: 'garden', limit: 10 })
      )[0];
      sleeps = [];
      const outcomes = await handler({ summarizer }).handle('end', second);
      expect(outcomes).toEqual([
        {
          ruleId: 'describe people',
          state: 'succeeded',
          message: expect.stringMatching(
            /^offline summary: the vision-language model failed: .*503.*\(after 3 attempts\)$/,
          ),
        },
      ]);
      expect(sleeps).toEqual([500, 1000]);
      const responses = (await (await fetch(`${app.url}/rules/responses/`)).json()) as any;
      expect(responses['describe people'][described]).toBe('Summary by tiny-vlm: A courier drops a parcel.');
      expect(responses['describe people'][failed]).toMatch(
        /^Summary from the recorder’s detections \(the vision-language model failed: .*503.*\): A person on camera garden /,
      );
    } finally {
      await vlm.close();
    }
  });

  it('leaves an action another replica is running, and runs it again once that replica stopped renewing its claim', async () => {
    const stranded = `${T0 + 600}.5-e2e007`;
    frigate.addEvent({ id: stranded, camera: 'yard', label: 'car', start_time: T0 + 600, end_time: T0 + 601 });
    const event = (
      await new FrigateRecorder({ url: frigate.url, timeoutMs: 5000 }).events({ camera: 'yard', limit: 1 })
    )[0];
    const book = new RuleBook(app.store, TEST_NAMESPACE, logger);
    const claimedAt = new Date('2026-12-30T12:00:00Z');
    // Another replica claimed the event and then died mid-action: its result is pending.
    expect(await book.claim('cars', stranded, 'yard', claimedAt, 60_000)).toBe('claimed');
    const at = (ms: number) => () => new Date(claimedAt.getTime() + ms);
    // While its lease runs (renewed at +40 s), the event is held: nothing is run twice.
    expect(await handler({ clock: at(30_000) }).handle('end', event)).toEqual([{ ruleId: 'cars', state: 'held' }]);
    expect(await book.renew('cars', stranded, new Date(claimedAt.getTime() + 40_000))).toBe(true);
    expect(await handler({ clock: at(90_000) }).handle('end', event)).toEqual([{ ruleId: 'cars', state: 'held' }]);
    let responses = (await (await fetch(`${app.url}/rules/responses/`)).json()) as any;
    expect(responses.cars[stranded]).toBe('pending');
    // No renewal for a whole lease: the next handling runs the action, counted once.
    const countBefore = ((await (await fetch(`${app.url}/rules/cars`)).json()) as any).count;
    const outcomes = await handler({ clock: at(101_000) }).handle('end', event);
    expect(outcomes).toEqual([
      {
        ruleId: 'cars',
        state: 'succeeded',
        message: expect.stringMatching(/^run again after the replica that claimed it stopped: alert sent/),
      },
    ]);
    responses = (await (await fetch(`${app.url}/rules/responses/`)).json()) as any;
    expect(responses.cars[stranded]).toBe('car on camera yard matched rule cars');
    expect(await (await fetch(`${app.url}/rules/cars`)).json()).toMatchObject({ count: countBefore });
    expect(await book.renew('cars', stranded, new Date())).toBe(false);
    expect(await handler().handle('end', event)).toEqual([{ ruleId: 'cars', state: 'duplicate' }]);
  });
});
