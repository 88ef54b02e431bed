import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BatchLog, MAX_BATCH_ENTRIES } from './pipeline/pipeline-stats.js';
import { TelemetryLog, type TelemetryRecord } from './ingest/telemetry.js';
import { RedisSharedState } from '../lib/shared-state/index.js';
import { REDIS_SERVER, startRedisServer, type RedisServer } from '../lib/shared-state/testing/redis-server.js';

function record(n: number): TelemetryRecord {
  return {
    request_id: `req-${n}`,
    source: '/v1/dataprep/media/process',
    timestamps: { requested_at: new Date(n * 1000).toISOString(), completed_at: '', wall_time_seconds: 1 },
    video: {
      bucket_name: 'b',
      video_id: `v${n}`,
      filename: 'clip.mp4',
      frame_interval: 15,
      fps: 30,
      total_frames: 300,
      video_duration_seconds: 10,
      tags: [],
    },
    config: { object_detection_enabled: true, detection_confidence: 0.85 },
    counts: { stream_id: 0, frames_extracted: 20, items_after_detection: 30, embeddings_stored: 30 },
    pipeline_stats: {},
    stage_duration: {},
    stage_throughput: {},
    batches: [],
  };
}

const ids = (records: TelemetryRecord[]) => records.map((r) => r.request_id);

describe('TelemetryLog', () => {
  let dir: string;
  let file: string;
  const lines = async () => (await readFile(file, 'utf8')).split('\n').filter(Boolean);

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dataprep-telemetry-'));
    file = path.join(dir, 'state', 'telemetry.jsonl');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends one JSON line per record, never rewriting what is written', async () => {
    const log = await TelemetryLog.open({ maxRecords: 10, file });
    let before = '';
    for (let n = 0; n < 6; n++) {
      log.add(record(n));
      await log.flush();
      const now = await readFile(file, 'utf8');
      expect(now.startsWith(before)).toBe(true);
      expect(JSON.parse(now.slice(before.length))).toEqual(record(n));
      before = now;
    }
    expect(ids(await log.list(3))).toEqual(['req-5', 'req-4', 'req-3']);
  });

  it('keeps the file bounded by compacting to the newest records, and a restart reads them back', async () => {
    const log = await TelemetryLog.open({ maxRecords: 5, file });
    for (let n = 0; n < 23; n++) {
      log.add(record(n));
      await log.flush();
      expect((await lines()).length).toBeLessThan(10);
    }
    expect(ids(await log.list(10))).toEqual(['req-22', 'req-21', 'req-20', 'req-19', 'req-18']);
    const reopened = await TelemetryLog.open({ maxRecords: 5, file });
    expect(await reopened.list(10)).toEqual(await log.list(10));
    // Every line on disk is a distinct record: compaction neither loses nor repeats any.
    const onDisk = (await lines()).map((line) => JSON.parse(line).request_id);
    expect(new Set(onDisk).size).toBe(onDisk.length);
  });

  it('records added while a compaction is queued are neither lost nor written twice', async () => {
    const log = await TelemetryLog.open({ maxRecords: 3, file });
    for (let n = 0; n < 14; n++) log.add(record(n)); // no flush in between: writes queue up behind each other
    await log.flush();
    const reopened = await TelemetryLog.open({ maxRecords: 3, file });
    expect(ids(await reopened.list(3))).toEqual(['req-13', 'req-12', 'req-11']);
    const onDisk = (await lines()).map((line) => JSON.parse(line).request_id);
    expect(onDisk).toEqual([...new Set(onDisk)]);
    expect(onDisk.at(-1)).toBe('req-13');
  });

  it('skips a torn last line (crash mid-write) and damaged lines, and appends cleanly after them', async () => {
    const log = await TelemetryLog.open({ maxRecords: 10, file });
    for (let n = 0; n < 3; n++) log.add(record(n));
    await log.flush();
    await appendFile(file, 'not json\n');
    await appendFile(file, JSON.stringify(record(3)).slice(0, 40)); // the process died in the middle of this write
    const reopened = await TelemetryLog.open({ maxRecords: 10, file });
    expect(ids(await reopened.list(10))).toEqual(['req-2', 'req-1', 'req-0']);
    reopened.add(record(4));
    await reopened.flush();
    const again = await TelemetryLog.open({ maxRecords: 10, file });
    expect(ids(await again.list(10))).toEqual(['req-4', 'req-2', 'req-1', 'req-0']);
    expect((await lines()).map((line) => JSON.parse(line).request_id)).toEqual(['req-0', 'req-1', 'req-2', 'req-4']);
  });

  it('starts empty without a file, and with a file holding no record', async () => {
    expect(await (await TelemetryLog.open({ maxRecords: 5, file })).list(5)).toEqual([]);
    await writeFile(file.replace('state/', ''), '');
    expect(await (await TelemetryLog.open({ maxRecords: 5, file: file.replace('state/', '') })).list(5)).toEqual([]);
    const memory = await TelemetryLog.open({ maxRecords: 2 });
    for (let n = 0; n < 3; n++) memory.add(record(n));
    expect(ids(await memory.list(5))).toEqual(['req-2', 'req-1']);
  });
});

describe('BatchLog', () => {
  it(`keeps the first and last ${MAX_BATCH_ENTRIES / 2} embedder calls of a long run and counts them all`, () => {
    const log = new BatchLog();
    const entry = (index: number) => ({
      index,
      items: 8,
      crops: 0,
      first_frame_id: index,
      last_frame_id: index,
      started_at_s: index,
      embed_s: 0.1,
    });
    for (let i = 0; i < 10; i++) log.add(entry(i));
    expect(log.entries().map((e) => e.index)).toEqual([...Array(10).keys()]);
    for (let i = 10; i < 1000; i++) log.add(entry(i));
    const kept = log.entries().map((e) => e.index);
    expect(log.total).toBe(1000);
    expect(kept).toHaveLength(MAX_BATCH_ENTRIES);
    const half = MAX_BATCH_ENTRIES / 2;
    expect(kept.slice(0, half)).toEqual([...Array(half).keys()]);
    expect(kept.slice(half)).toEqual(Array.from({ length: half }, (_, i) => 1000 - half + i));
  });
});

const withRedis = REDIS_SERVER ? describe : describe.skip;
if (!REDIS_SERVER)
  console.warn('SKIPPED: redis-server is not installed (apt-get install redis-server); shared telemetry');

withRedis('TelemetryLog shared by replicas on a real redis-server', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function replica(namespace: string, availability: Array<[boolean, unknown]> = []) {
    const shared = new RedisSharedState({ url: server.url, namespace, clientName: 'argus-dataprep-test' });
    await shared.ready();
    const log = await TelemetryLog.open({
      maxRecords: 3,
      shared,
      onSharedAvailability: (available, error) => availability.push([available, error]),
    });
    return { log, close: () => shared.close() };
  }

  it("lists every replica's records, newest first and bounded, on either replica", async () => {
    const a = await replica('shared-1:');
    const b = await replica('shared-1:');
    try {
      a.log.add(record(1));
      await a.log.flush();
      b.log.add(record(2));
      await b.log.flush();
      a.log.add(record(3));
      b.log.add(record(4));
      await Promise.all([a.log.flush(), b.log.flush()]);
      expect(ids(await b.log.list(10))).toEqual(['req-4', 'req-3', 'req-2']);
      expect(ids(await a.log.list(10))).toEqual(['req-4', 'req-3', 'req-2']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('answers its own records while Redis is down (fail open), says so once, and reads the shared list again after', async () => {
    const availability: Array<[boolean, unknown]> = [];
    const a = await replica('shared-2:', availability);
    try {
      a.log.add(record(1));
      await a.log.flush();
      await server.stop();
      a.log.add(record(2));
      await a.log.flush();
      expect(ids(await a.log.list(10))).toEqual(['req-2', 'req-1']);
      expect(ids(await a.log.list(10))).toEqual(['req-2', 'req-1']);
      expect(availability.map(([available]) => available)).toEqual([false]);
      await server.restart();
      // The client reconnects by itself; the restarted server is empty (it keeps nothing on disk).
      let listed: TelemetryRecord[] | undefined;
      for (let attempt = 0; attempt < 200; attempt++) {
        a.log.add(record(3));
        await a.log.flush();
        if (availability.at(-1)?.[0] === true) {
          listed = await a.log.list(10);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(availability.map(([available]) => available)).toEqual([false, true]);
      expect(ids(listed ?? [])[0]).toBe('req-3');
    } finally {
      await a.close();
    }
  }, 30_000);
});
