import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makeTestVideo } from '../../../test/support/media.js';
import { DirectoryRecorder } from './directory-recorder.js';
import { MediaNotReadyError } from './recorder.js';

let root: string;
let recorder: DirectoryRecorder;
/** 2026-03-10T14:05:00Z and the segments after it. */
const T = Date.parse('2026-03-10T14:05:00Z') / 1000;

async function segment(relative: string, video?: string): Promise<void> {
  const file = path.join(root, relative);
  await mkdir(path.dirname(file), { recursive: true });
  if (video) await copyFile(video, file);
  else await writeFile(file, '');
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-recordings-'));
  const video = await makeTestVideo({ seconds: 1, fps: 5, width: 160, height: 120 });
  await segment('2026-03-10/14/front_door/05.00.mp4', video);
  await segment('2026-03-10/14/front_door/05.10.mp4', video);
  await segment('2026-03-10/15/front_door/00.00.mp4');
  await segment('2026-03-10/14/garage/05.00.mp4');
  await segment('2026-03-10/14/garage/notes.txt');
  await mkdir(path.join(root, 'not-a-date/14/attic'), { recursive: true });
  recorder = new DirectoryRecorder(root);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the directory recorder (Frigate layout, UTC)', () => {
  it('lists the camera directories seen under date and hour directories', async () => {
    expect(await recorder.cameras()).toEqual([
      { name: 'front_door', labels: ['person'] },
      { name: 'garage', labels: ['person'] },
    ]);
    expect(await new DirectoryRecorder(path.join(root, 'missing')).cameras()).toEqual([]);
  });

  it('lists segments as events newest first, each ending where the next starts', async () => {
    const events = await recorder.events({ camera: 'front_door', limit: 10 });
    expect(events.map((e) => [e.start_time, e.end_time])).toEqual([
      [T + 3300, null],
      [T + 10, T + 3300],
      [T, T + 10],
    ]);
    expect(events[2]).toEqual({
      id: `${T}-front_door`,
      camera: 'front_door',
      label: 'recording',
      sub_label: null,
      zones: [],
      start_time: T,
      end_time: T + 10,
      has_clip: true,
      has_snapshot: true,
      top_score: null,
      data: { type: 'recording' },
    });
    const page = await recorder.events({ camera: 'front_door', limit: 1, after: T, before: T + 3300 });
    expect(page.map((e) => e.start_time)).toEqual([T + 10]);
    expect(await recorder.events({ camera: '../front_door', limit: 10 })).toEqual([]);
  });

  it('serves the segment covering a time as the clip, and its first frame as the snapshot', async () => {
    const clip = await recorder.clip('front_door', T + 12, T + 15);
    expect(clip.subarray(4, 8).toString('latin1')).toBe('ftyp');
    await expect(recorder.clip('front_door', T - 100, T - 50)).rejects.toThrow(MediaNotReadyError);
    const [event] = await recorder.events({ camera: 'front_door', limit: 1, before: T + 1 });
    const jpeg = await recorder.snapshot(event);
    expect(jpeg.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
  });
});
