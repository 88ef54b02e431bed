import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataprepSearchIndex } from '../actions/search-index.js';
import { FrigateRecorder } from '../recorder/frigate-recorder.js';
import { RecorderUnavailableError, type RecordingSegment } from '../recorder/recorder.js';
import { FakeFrigate } from '../testing/fake-frigate.js';
import { startPeerServices, type PeerServices } from '../testing/services.js';
import {
  clipRanges,
  DEFAULT_RECORDING_LIMITS,
  RecordingFollower,
  type RecordingProgress,
} from './recording-follower.js';

/** A fixed moment, so that the fake's recordings and the follower's `now` are the test's own. */
const P = 1_767_000_000;

let peers: PeerServices;
let frigate: FakeFrigate;
let recorder: FrigateRecorder;
let search: DataprepSearchIndex;

beforeAll(async () => {
  peers = await startPeerServices();
  frigate = new FakeFrigate({ gate: {}, yard: {}, shed: {} });
  await frigate.start();
  recorder = new FrigateRecorder({ url: frigate.url, timeoutMs: 5000 });
  search = new DataprepSearchIndex({
    url: peers.dataprep,
    bucket: 'recordings-test',
    timeoutMs: 120_000,
    frameInterval: 15,
  });
}, 180_000);

afterAll(async () => {
  await frigate?.close();
  await peers?.close();
});

const segment = (start: number, end: number): RecordingSegment => ({
  id: `${start}-x`,
  start_time: start,
  end_time: end,
  segment_size: null,
  motion: null,
  objects: null,
  duration: end - start,
});

/** What a catch-up told, in order. */
function recorded() {
  const steps: RecordingProgress[] = [];
  return { steps, progress: async (step: RecordingProgress) => void steps.push(step) };
}

describe('clip ranges', () => {
  it('joins consecutive segments up to the longest clip, and splits at gaps', () => {
    const segments = [
      segment(0, 10),
      segment(10, 20),
      segment(20.4, 30),
      segment(30, 40),
      segment(40, 50),
      segment(50, 60),
      segment(60, 70),
      segment(75, 85),
      segment(85, 300),
    ];
    expect(clipRanges(segments, 60)).toEqual([
      { start: 0, end: 60 },
      { start: 60, end: 70 },
      { start: 75, end: 85 },
      { start: 85, end: 300 },
    ]);
  });
});

describe("a watcher's recordings to search (the Frigate fake's /api/<camera>/recordings, real clips, real dataprep)", () => {
  it('sends each new finished recording once, as clips of consecutive segments, and tells each position', async () => {
    frigate.addRecording('gate', P - 20, P - 10);
    frigate.addRecording('gate', P + 10, P + 80);
    frigate.addRecording('gate', P + 100, P + 110);
    const follower = new RecordingFollower(recorder, search);
    const { steps, progress } = recorded();
    const position = await follower.catchUp('gate', P, P + 200, progress);

    expect(position).toBe(P + 110);
    expect(steps.map((s) => [s.position, s.clip?.start, s.clip?.end])).toEqual([
      [P + 70, P + 10, P + 70],
      [P + 80, P + 70, P + 80],
      [P + 110, P + 100, P + 110],
    ]);
    expect(new Set(steps.map((s) => s.clip?.indexed.videoId)).size).toBe(3);
    // The listing named both bounds; the older recording was not asked for.
    const listing = frigate.requests.find((r) => r.path === '/api/gate/recordings');
    expect(listing?.query).toEqual({ after: String(P), before: String(P + 200) });
    expect(frigate.requests.filter((r) => r.path.startsWith('/api/gate/start/')).map((r) => r.path)).toEqual([
      `/api/gate/start/${P + 10}/end/${P + 70}/clip.mp4`,
      `/api/gate/start/${P + 70}/end/${P + 80}/clip.mp4`,
      `/api/gate/start/${P + 100}/end/${P + 110}/clip.mp4`,
    ]);
    // Found by search with the camera's tag, Frigate's and each clip's start.
    const answer = await fetch(`${peers.dataprep}/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'a person', tags: ['camera:gate'], bucket_name: 'recordings-test', top_k: 50 }),
    });
    const hits = ((await answer.json()) as { hits: Array<{ video_id: string; tags: string[] }> }).hits;
    const byVideo = new Map(hits.map((hit) => [hit.video_id, hit.tags]));
    for (const step of steps)
      expect(byVideo.get(step.clip!.indexed.videoId)).toEqual(
        expect.arrayContaining(['camera:gate', 'source:frigate', `recording:${step.clip!.start}`]),
      );

    // Nothing new: the next catch-up from there sends nothing.
    const again = recorded();
    expect(await follower.catchUp('gate', position, P + 200, again.progress)).toBe(position);
    expect(again.steps).toEqual([]);
  }, 180_000);

  it('passes over a stretch without recordings only once it has settled, a window at a time', async () => {
    const follower = new RecordingFollower(recorder, search);
    const { steps, progress } = recorded();
    const now = P + 5000;
    expect(await follower.catchUp('yard', P, now, progress)).toBe(now - DEFAULT_RECORDING_LIMITS.settleSeconds);
    expect(steps).toEqual([{ position: P + 3600 }, { position: now - 600 }]);
    // A recording of the unsettled last minutes is still found by the next catch-up.
    frigate.addRecording('yard', now - 300, now - 290);
    const next = recorded();
    expect(await follower.catchUp('yard', now - 600, now, next.progress)).toBe(now - 290);
    expect(next.steps.map((s) => s.clip?.start)).toEqual([now - 300]);
  }, 120_000);

  it('sends at most maxClips a catch-up, and a clip sent again after a lost position is the same video', async () => {
    frigate.addRecording('shed', P + 10, P + 20);
    frigate.addRecording('shed', P + 30, P + 40);
    const follower = new RecordingFollower(recorder, search, { ...DEFAULT_RECORDING_LIMITS, maxClips: 1 });
    // The position of the first clip is never written (the watcher stopped between the upload and its status).
    await expect(
      follower.catchUp('shed', P, P + 100, async () => {
        throw new Error('the replica stopped');
      }),
    ).rejects.toThrow('the replica stopped');
    const { steps, progress } = recorded();
    expect(await follower.catchUp('shed', P, P + 100, progress)).toBe(P + 20);
    // dataprep knows the bytes (the same window, the same clip): the first upload's video, not a second one.
    expect(steps).toHaveLength(1);
    expect(steps[0].clip?.indexed.message).toMatch(/^already indexed as video_id /);
    const rest = recorded();
    expect(await follower.catchUp('shed', P + 20, P + 100, rest.progress)).toBe(P + 40);
    expect(rest.steps[0].clip?.indexed.message).not.toMatch(/already indexed/);
  }, 120_000);

  it('keeps its position when Frigate does not answer', async () => {
    const down = new FrigateRecorder({ url: 'http://127.0.0.1:9', timeoutMs: 2000 });
    const { steps, progress } = recorded();
    await expect(new RecordingFollower(down, search).catchUp('gate', P, P + 100, progress)).rejects.toThrow(
      RecorderUnavailableError,
    );
    expect(steps).toEqual([]);
  });
});
