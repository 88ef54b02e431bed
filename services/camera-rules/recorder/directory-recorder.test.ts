import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fixtureImage, makeTestVideo } from '../../../test/support/media.js';
import { DataprepSegmentAnalyser } from '../actions/dataprep-segment-analyser.js';
import { DataprepSearchIndex } from '../actions/search-index.js';
import { startPeerServices, type PeerServices } from '../testing/services.js';
import { DetectionLog } from './detection-log.js';
import { DirectoryRecorder } from './directory-recorder.js';
import { MediaNotReadyError } from './recorder.js';

let root: string;
let peers: PeerServices;
let recorder: DirectoryRecorder;
/** Uploads dataprep received, counted by the analyser's index. */
let uploads = 0;
/** 2026-03-10T14:05:00Z and the segments after it. */
const T = Date.parse('2026-03-10T14:05:00Z') / 1000;
const BUCKET = 'camera-events';

async function segment(relative: string, video?: string): Promise<void> {
  const file = path.join(root, relative);
  await mkdir(path.dirname(file), { recursive: true });
  if (video) await copyFile(video, file);
  else await writeFile(file, '');
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-recordings-'));
  peers = await startPeerServices();
  // Real footage: people (the detector finds persons), and a table with a coffee cup.
  const people = await makeTestVideo({
    source: fixtureImage('person_multi_det.jpg'),
    seconds: 2,
    fps: 5,
    width: 320,
    height: 240,
  });
  const cup = await makeTestVideo({ source: fixtureImage('coffee.png'), seconds: 2, fps: 5, width: 320, height: 240 });
  await segment('2026-03-10/14/front_door/05.00.mp4', people);
  await segment('2026-03-10/14/front_door/05.10.mp4', cup);
  await segment('2026-03-10/15/front_door/00.00.mp4', people);
  await segment('2026-03-10/14/garage/05.00.mp4');
  await segment('2026-03-10/14/garage/notes.txt');
  await mkdir(path.join(root, 'not-a-date/14/attic'), { recursive: true });
  const index = new DataprepSearchIndex({ url: peers.dataprep, bucket: BUCKET, timeoutMs: 120_000, frameInterval: 5 });
  const counting = {
    add: (...args: Parameters<DataprepSearchIndex['add']>) => {
      uploads++;
      return index.add(...args);
    },
  };
  const analyser = new DataprepSegmentAnalyser(counting, { url: peers.dataprep, timeoutMs: 30_000 });
  recorder = new DirectoryRecorder(root, {
    analyser,
    log: new DetectionLog(path.join(root, '..', `${path.basename(root)}-detections`)),
  });
}, 180_000);

afterAll(async () => {
  await peers?.close();
  if (root) {
    await rm(root, { recursive: true, force: true });
    await rm(`${root}-detections`, { recursive: true, force: true });
  }
});

describe('the directory recorder (Frigate layout, UTC)', () => {
  it('lists the camera directories seen under date and hour directories', async () => {
    expect(await recorder.cameras()).toEqual([
      { name: 'front_door', labels: ['person'] },
      { name: 'garage', labels: ['person'] },
    ]);
    expect(await new DirectoryRecorder(path.join(root, 'missing')).cameras()).toEqual([]);
  });

  it('lists no event of a segment nobody analysed', async () => {
    expect(await recorder.events({ camera: 'front_door', limit: 10 })).toEqual([]);
    expect(uploads).toBe(0);
  });

  it('analyses each final segment once through dataprep: its detections become events, the segment searchable', async () => {
    const events = await recorder.events({ camera: 'front_door', limit: 100, analyse: true });
    // The newest segment (15:00:00) may still be written: not analysed yet.
    expect(uploads).toBe(2);
    const byId = new Map(events.map((e) => [e.id, e]));
    const person = byId.get(`${T}-front_door-person`);
    expect(person).toMatchObject({
      camera: 'front_door',
      label: 'person',
      sub_label: null,
      zones: [],
      start_time: T,
      has_clip: true,
      has_snapshot: true,
      top_score: null,
      data: { type: 'object', bucket_name: BUCKET, segment_start: T },
    });
    expect(person!.end_time).toBeGreaterThanOrEqual(T);
    expect(person!.end_time).toBeLessThan(T + 10);
    // The second segment's classes (what the detector makes of a coffee table scene), one event each.
    const second = byId.get(`${T + 10}-front_door`)!;
    for (const label of second.data.labels as string[]) {
      expect(byId.get(`${T + 10}-front_door-${label.replace(/ /g, '_')}`)).toMatchObject({
        label,
        camera: 'front_door',
      });
    }
    expect(byId.get(`${T}-front_door`)).toMatchObject({
      label: 'recording',
      start_time: T,
      end_time: T + 10,
      data: { type: 'recording', labels: expect.arrayContaining(['person']) },
    });
    expect(byId.get(`${T + 10}-front_door`)).toMatchObject({ label: 'recording', end_time: T + 3300 });
    // Newest first; at an equal start the recording comes before its classes (so after them in time order).
    const starts = events.map((e) => e.start_time);
    expect(starts).toEqual([...starts].sort((a, b) => b - a));
    expect(events.at(-1)?.label).not.toBe('recording');

    // The segment is in search with its camera's tag.
    const found = (await (
      await fetch(`${peers.dataprep}/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'people', tags: ['camera:front_door'], bucket_name: BUCKET }),
      })
    ).json()) as any;
    expect(found.hits[0]).toMatchObject({
      video_id: person!.data.video_id,
      tags: expect.arrayContaining(['source:directory', `recording:${T}`]),
    });

    // Analysed once: listings (and later catch-ups) read the detection log.
    expect((await recorder.events({ camera: 'front_door', limit: 100, analyse: true })).length).toBe(events.length);
    expect(await recorder.events({ camera: 'front_door', limit: 100 })).toEqual(events);
    expect(uploads).toBe(2);
    expect(await readdir(path.join(`${root}-detections`, 'front_door'))).toEqual([`${T}.json`, `${T + 10}.json`]);
  }, 120_000);

  it('answers after, before (strict, on start_time) and limit over the analysed events', async () => {
    const all = await recorder.events({ camera: 'front_door', limit: 100 });
    const after = await recorder.events({ camera: 'front_door', limit: 100, after: T });
    expect(after).toEqual(all.filter((e) => e.start_time > T));
    const before = await recorder.events({ camera: 'front_door', limit: 100, before: T + 10 });
    expect(before).toEqual(all.filter((e) => e.start_time < T + 10));
    expect(await recorder.events({ camera: 'front_door', limit: 1 })).toEqual(all.slice(0, 1));
    // Oldest first (a watcher's catch-up): the oldest `limit`, ascending.
    const oldest = await recorder.events({ camera: 'front_door', limit: 2, oldestFirst: true });
    expect(oldest).toEqual([...all].reverse().slice(0, 2));
    expect(await recorder.events({ camera: '../front_door', limit: 10, analyse: true })).toEqual([]);
  });

  it('passes over a final segment dataprep refuses (a torn file), once, and goes on with the next ones', async () => {
    // The shed's first segment is no video; the second is; the third, the newest, is not final yet.
    await mkdir(path.join(root, '2026-03-10/14/shed'), { recursive: true });
    await writeFile(path.join(root, '2026-03-10/14/shed/05.00.mp4'), 'a segment cut short by a power failure');
    await copyFile(
      path.join(root, '2026-03-10/14/front_door/05.00.mp4'),
      path.join(root, '2026-03-10/14/shed/05.10.mp4'),
    );
    await segment('2026-03-10/14/shed/05.20.mp4');
    const before = uploads;
    const events = await recorder.events({ camera: 'shed', limit: 100, analyse: true, oldestFirst: true });
    expect(uploads - before).toBe(2);
    expect(events.map((e) => e.id)).toContain(`${T + 10}-shed-person`);
    expect(events.filter((e) => e.start_time < T + 10)).toEqual([]);
    // Refused for good: not sent again by the next catch-up.
    expect(await recorder.events({ camera: 'shed', limit: 100, analyse: true, oldestFirst: true })).toEqual(events);
    expect(uploads - before).toBe(2);
  }, 120_000);

  it('serves the segment covering a time as the clip, and the frame at an event as its snapshot', async () => {
    const clip = await recorder.clip('front_door', T + 12, T + 15);
    expect(clip.subarray(4, 8).toString('latin1')).toBe('ftyp');
    await expect(recorder.clip('front_door', T - 100, T - 50)).rejects.toThrow(MediaNotReadyError);
    const [event] = await recorder.events({ camera: 'front_door', limit: 1, before: T + 10 });
    const jpeg = await recorder.snapshot({ ...event, start_time: T + 1.2 });
    expect(jpeg.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
  });
});
