import { afterEach, describe, expect, it } from '@jest/globals';
import { MetadataRelay } from './relay/metadata-relay.js';
import { connectRelay } from './relay/mqtt-relay-source.js';
import { ManualTimers } from './testing/manual-timers.js';
import { sendJson, serveRuns, type ServedRuns } from './testing/serve-app.js';
import { readSse } from './testing/sse-reader.js';
import { checkStreamEvent } from '../../test/support/contract-check.js';
import { startTestBroker, type TestBroker } from '../../test/support/mqtt-broker.js';
import mqtt from 'mqtt';

const caption = (result: string, frameId: number) =>
  JSON.stringify({ metadata: { result, frame_id: frameId }, blob: 'x' });

describe('MetadataRelay', () => {
  it('relays captions of every run as {runId, data, received_at}, and ignores what is not a caption', async () => {
    const relay = new MetadataRelay({
      bufferMessages: 10,
      idleMs: 1000,
      timers: new ManualTimers(),
      clock: () => 1500,
    });
    const subscriber = relay.subscribe();
    relay.receive('live-video-captioning/a', caption('first', 1));
    relay.receive('live-video-captioning/b', caption('second', 7));
    relay.receive('live-video-captioning/a', 'not json');
    relay.receive('live-video-captioning/a', JSON.stringify({ metadata: { frame_id: 2 } }));
    relay.receive('elsewhere/a', caption('nope', 3));
    relay.receive('live-video-captioning/bad id', caption('nope', 3));
    expect(await subscriber.next()).toEqual({
      kind: 'message',
      json: JSON.stringify({ runId: 'a', data: { result: 'first', frame_id: 1 }, received_at: 1.5 }),
    });
    expect(JSON.parse(((await subscriber.next()) as { json: string }).json).runId).toBe('b');
    expect(relay.counters).toEqual({ received: 2, ignored: 4, missed: 0 });
    subscriber.close();
    expect(relay.subscriberCount).toBe(0);
  });

  it('is due a status after the idle time, again while quiet; a message re-arms the timer', async () => {
    const timers = new ManualTimers();
    const relay = new MetadataRelay({ bufferMessages: 10, idleMs: 1000, timers });
    const subscriber = relay.subscribe();
    const waiting = subscriber.next();
    timers.fireAll();
    expect(await waiting).toEqual({ kind: 'status' });
    timers.fireAll();
    expect(await subscriber.next()).toEqual({ kind: 'status' });
    relay.receive('live-video-captioning/a', caption('x', 1));
    expect(timers.armed).toBe(1);
    expect((await subscriber.next())?.kind).toBe('message');
    subscriber.close();
    expect(timers.armed).toBe(0);
  });

  it('bounds each subscriber: a slow one loses the oldest and is told how many; the others lose nothing', async () => {
    const relay = new MetadataRelay({ bufferMessages: 3, idleMs: 1000, timers: new ManualTimers() });
    const slow = relay.subscribe();
    const other = relay.subscribe();
    const taken: number[] = [];
    relay.receive('live-video-captioning/a', caption('0', 0));
    taken.push(JSON.parse(((await other.next()) as { json: string }).json).data.frame_id);
    for (let i = 1; i <= 5; i++) {
      relay.receive('live-video-captioning/a', caption(String(i), i));
      taken.push(JSON.parse(((await other.next()) as { json: string }).json).data.frame_id);
    }
    expect(taken).toEqual([0, 1, 2, 3, 4, 5]);
    expect(await slow.next()).toEqual({ kind: 'missed', count: 3 });
    const rest: number[] = [];
    for (let i = 0; i < 3; i++) rest.push(JSON.parse(((await slow.next()) as { json: string }).json).data.frame_id);
    expect(rest).toEqual([3, 4, 5]);
    expect(relay.counters.missed).toBe(3);
    relay.close();
    expect(await slow.next()).toBeUndefined();
  });
});

describe('GET /api/generate_captions_alerts/metadata-stream', () => {
  let served: ServedRuns | undefined;
  let broker: TestBroker | undefined;
  afterEach(async () => {
    await served?.close();
    await broker?.close();
    served = undefined;
    broker = undefined;
  });

  it('multiplexes two runs from a real MQTT broker on one SSE stream, then a status of every run when quiet', async () => {
    const timers = new ManualTimers();
    served = await serveRuns({ relay: { timers } });
    broker = await startTestBroker();
    const source = connectRelay(broker.url, served.relay, served.logger, 'relay-test');
    await sendJson(`${served.api}/generate_captions_alerts`, { rtspUrl: 'rtsp://127.0.0.1/a', runName: 'a' });
    await sendJson(`${served.api}/generate_captions_alerts`, { rtspUrl: 'rtsp://127.0.0.1/b', runName: 'b' });
    await fetch(`${served.api}/generate_captions_alerts/b`, { method: 'DELETE' });
    const stream = await readSse(`${served.api}/generate_captions_alerts/metadata-stream`);
    const publisher = await mqtt.connectAsync(broker.url);
    try {
      await source.subscribed;
      const before = stream.messages.length;
      await publisher.publishAsync('live-video-captioning/a', caption('a person walks by', 10), { qos: 1 });
      await publisher.publishAsync('live-video-captioning/b', caption('a car parks', 20), { qos: 1 });
      const messages = (await stream.waitFor(before + 2)).slice(before);
      expect(messages).toEqual([
        { runId: 'a', data: { result: 'a person walks by', frame_id: 10 }, received_at: expect.any(Number) },
        { runId: 'b', data: { result: 'a car parks', frame_id: 20 }, received_at: expect.any(Number) },
      ]);
      timers.fireAll();
      const [status] = (await stream.waitFor(before + 3)).slice(before + 2);
      expect(status).toEqual({ type: 'status', runs: { a: 'starting', b: 'stopped' } });
      // Each event as the service's document describes the stream's events.
      const doc = (await (await fetch(`${served.url}/openapi.json`)).json()) as Record<string, unknown>;
      const operation = { method: 'get', path: '/api/generate_captions_alerts/metadata-stream' };
      for (const data of [...messages, status])
        checkStreamEvent('caption-runs', doc, operation, { event: 'message', data });
    } finally {
      await publisher.endAsync();
      await stream.close();
      await source.close();
    }
    const head = await fetch(`${served.api}/generate_captions_alerts/metadata-stream`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
  }, 30_000);
});
