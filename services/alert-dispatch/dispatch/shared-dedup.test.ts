import { describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../lib/log/index.js';
import { MemorySharedState, SharedStateUnavailableError, type SharedState } from '../../lib/shared-state/index.js';
import { OutageLog } from '../shared/outage-log.js';
import { actionRequest as request } from '../testing/action-request.js';
import { SharedDedupStore } from './shared-dedup.js';
import type { DedupSpec } from './types.js';

const spec: DedupSpec = {
  enabled: true,
  strategy: 'field_hash',
  fields: ['source_id', 'alert_name'],
  window_seconds: 60,
  on_missing: 'skip',
};

/** A logger whose lines the test reads. */
function recordingLogger() {
  const lines: string[] = [];
  const sink = new PassThrough().setEncoding('utf8');
  sink.on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
  return {
    logger: createLogger({ service: 't', level: 'info', json: true, streams: { stdout: sink, stderr: sink } }),
    lines,
  };
}

/** Two "replicas": two stores on one shared state (the memory adapter stands in for Redis; no timing involved). */
async function twoReplicas(now: () => number) {
  const state = new MemorySharedState(now);
  const outage = new OutageLog(recordingLogger().logger, {});
  const open = async (replica: string) => {
    // recheckMs is far beyond any test: a waiter wakes on the other replica's notice, never on the clock.
    const store = new SharedDedupStore({
      state,
      clock: now,
      outage,
      replica,
      claimTtlMs: 600_000,
      recheckMs: 3_600_000,
    });
    await store.start();
    return store;
  };
  return { a: await open('a'), b: await open('b') };
}

describe('SharedDedupStore', () => {
  it('makes a copy on another replica wait for the running one: suppressed when it delivered', async () => {
    const { a, b } = await twoReplicas(() => 0);
    const first = await a.check(request(), spec);
    expect(first).toEqual({ duplicate: false, key: expect.any(String) });
    const copy = await b.check(request({ event_id: 'e2' }), spec);
    expect(copy).toMatchObject({ duplicate: false, key: first.key, pending: expect.any(Promise) });
    await a.settle(first.key!, true);
    await copy.pending;
    expect(await b.check(request({ event_id: 'e2' }), spec)).toEqual({ duplicate: true, key: first.key });
    await Promise.all([a.close(), b.close()]);
  });

  it('runs the waiting copy in its place when the running one delivered nothing', async () => {
    const { a, b } = await twoReplicas(() => 0);
    const first = await a.check(request(), spec);
    const copy = await b.check(request({ event_id: 'e2' }), spec);
    await a.settle(first.key!, false);
    await copy.pending;
    const again = await b.check(request({ event_id: 'e2' }), spec);
    expect(again).toEqual({ duplicate: false, key: first.key });
    // Now b runs it, and a copy on a waits for b in turn.
    const third = await a.check(request({ event_id: 'e3' }), spec);
    expect(third.pending).toBeDefined();
    await b.settle(again.key!, true);
    await third.pending;
    expect((await a.check(request({ event_id: 'e3' }), spec)).duplicate).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });

  it('keeps copies on one replica waiting in memory, and counts the window from the arrival of the delivered alert', async () => {
    let now = 1_000_000;
    const { a, b } = await twoReplicas(() => now);
    const first = a.check(request(), spec);
    const local = await a.check(request({ event_id: 'e2' }), spec); // before the first has even reached the state
    expect(local.pending).toBeDefined();
    const claimed = await first;
    now += 5_000; // the dispatch took 5 s
    await a.settle(claimed.key!, true);
    await local.pending;
    expect((await a.check(request({ event_id: 'e2' }), spec)).duplicate).toBe(true);
    now += 54_999; // 59.999 s after the first arrived
    expect((await b.check(request({ event_id: 'e3' }), spec)).duplicate).toBe(true);
    now += 1;
    expect((await b.check(request({ event_id: 'e4' }), spec)).duplicate).toBe(false);
    await Promise.all([a.close(), b.close()]);
  });

  it('fails open while the shared state is unreachable, logging the outage once and its end once', async () => {
    const memory = new MemorySharedState();
    let down = true;
    const unavailable = () => Promise.reject(new SharedStateUnavailableError('redis is down'));
    const flaky = new Proxy(memory, {
      get: (target, name: keyof SharedState) =>
        down && name !== 'subscribe' ? unavailable : (target[name] as (...args: unknown[]) => unknown).bind(target),
    });
    const { logger, lines } = recordingLogger();
    const store = new SharedDedupStore({
      state: flaky,
      clock: Date.now,
      outage: new OutageLog(logger, { dedup: 'fails open' }),
      replica: 'a',
      claimTtlMs: 60_000,
    });
    await store.start();
    for (let i = 0; i < 3; i++) {
      const verdict = await store.check(request({ event_id: `e${i}` }), spec);
      expect(verdict).toEqual({ duplicate: false, key: expect.any(String) });
      await store.settle(verdict.key!, true);
    }
    down = false;
    const verdict = await store.check(request({ event_id: 'back' }), spec);
    expect(verdict.duplicate).toBe(false);
    await store.settle(verdict.key!, true);
    expect((await store.check(request({ event_id: 'dup' }), spec)).duplicate).toBe(true);
    await new Promise((resolve) => setImmediate(resolve)); // the logger writes once per event-loop turn
    const messages = lines.map((line) => JSON.parse(line).message);
    expect(messages).toEqual(['shared state unavailable; degraded until it is back', 'shared state reachable again']);
    await store.close();
  });
});
