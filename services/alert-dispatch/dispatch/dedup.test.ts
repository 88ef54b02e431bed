import { describe, expect, it } from '@jest/globals';
import { DedupStore, dedupKey, type DedupVerdict } from './dedup.js';
import { resolvePlan } from './resolve-tools.js';
import type { ActionRequest, DedupSpec } from './types.js';
import { actionRequest as request } from '../testing/action-request.js';

const spec = (over: Partial<DedupSpec> = {}): DedupSpec => ({
  enabled: true,
  strategy: 'field_hash',
  fields: ['source_id', 'alert_name'],
  window_seconds: 60,
  on_missing: 'skip',
  ...over,
});

/** A dedup check whose dispatch delivered: what the dispatcher does after a tool succeeded. */
function admit(store: DedupStore, r: ActionRequest, s: DedupSpec | undefined): DedupVerdict {
  const verdict = store.check(r, s);
  if (verdict.key !== null && !verdict.duplicate && !verdict.pending) store.settle(verdict.key, true);
  return verdict;
}

describe('DedupStore', () => {
  it('suppresses a repeat inside the window and lets it through once the window has passed (hits do not extend it)', () => {
    let now = 1_000_000;
    const store = new DedupStore(() => now);
    expect(admit(store, request(), spec()).duplicate).toBe(false);
    now += 30_000;
    expect(admit(store, request({ event_id: 'e2' }), spec()).duplicate).toBe(true);
    now += 29_999; // 59.999 s after the first: still inside, although a hit happened at 30 s
    expect(admit(store, request(), spec()).duplicate).toBe(true);
    now += 1; // 60 s after the first: the window counted from the first event is over
    expect(admit(store, request(), spec()).duplicate).toBe(false);
    expect(admit(store, request(), spec()).duplicate).toBe(true);
  });

  it('keys on the set of fields: their order and repeats do not matter', () => {
    const key = dedupKey(request(), spec({ fields: ['source_id', 'alert_name'] }));
    expect(dedupKey(request(), spec({ fields: ['alert_name', 'source_id'] }))).toBe(key);
    expect(dedupKey(request(), spec({ fields: ['alert_name', 'source_id', 'alert_name'] }))).toBe(key);
    expect(dedupKey(request(), spec({ fields: ['alert_name'] }))).not.toBe(key);
  });

  it('keys on the listed fields only, metadata paths included', () => {
    const now = 0;
    const store = new DedupStore(() => now);
    const s = spec({ fields: ['source_id', 'metadata.zone'] });
    expect(admit(store, request({ metadata: { zone: 'A', other: 1 } }), s).duplicate).toBe(false);
    expect(admit(store, request({ alert_name: 'other', metadata: { other: 2, zone: 'A' } }), s).duplicate).toBe(true);
    expect(admit(store, request({ metadata: { zone: 'B' } }), s).duplicate).toBe(false);
    expect(admit(store, request({ source_id: 'cam-2', metadata: { zone: 'A' } }), s).duplicate).toBe(false);
  });

  it('skips dedup when a field is missing (on_missing skip) and hashes it as null with hash_missing', () => {
    const store = new DedupStore(() => 0);
    const skip = spec({ fields: ['metadata.track_id'] });
    expect(dedupKey(request(), skip)).toBeNull();
    expect(admit(store, request(), skip)).toMatchObject({ duplicate: false, key: null });
    expect(admit(store, request(), skip).duplicate).toBe(false);
    const hashMissing = spec({ fields: ['metadata.track_id'], on_missing: 'hash_missing' });
    expect(admit(store, request(), hashMissing).duplicate).toBe(false);
    expect(admit(store, request(), hashMissing).duplicate).toBe(true);
    expect(admit(store, request({ metadata: { track_id: null } }), hashMissing).duplicate).toBe(true);
  });

  it('does nothing when disabled', () => {
    const store = new DedupStore(() => 0);
    expect(admit(store, request(), spec({ enabled: false })).duplicate).toBe(false);
    expect(admit(store, request(), spec({ enabled: false })).duplicate).toBe(false);
    expect(admit(store, request(), undefined).duplicate).toBe(false);
    expect(store.size).toBe(0);
  });

  it('stays bounded: the oldest keys go first', () => {
    const store = new DedupStore(() => 0, 3);
    for (const id of ['a', 'b', 'c', 'd']) admit(store, request({ source_id: id }), spec());
    expect(store.size).toBe(3);
    expect(admit(store, request({ source_id: 'd' }), spec()).duplicate).toBe(true);
    expect(admit(store, request({ source_id: 'a' }), spec()).duplicate).toBe(false); // evicted, so new again
  });

  it('records a key only when its dispatch delivered, so a retry of an alert that failed everywhere runs', () => {
    let now = 0;
    const store = new DedupStore(() => now);
    const first = store.check(request(), spec());
    expect(first).toMatchObject({ duplicate: false, key: expect.any(String) });
    store.settle(first.key!, false);
    expect(store.size).toBe(0);
    now += 1000;
    const retry = store.check(request({ event_id: 'e2' }), spec());
    expect(retry.duplicate).toBe(false);
    store.settle(retry.key!, true);
    // The window counts from the delivered alert's arrival (1 s), not from the failed first one.
    now = 60_999;
    expect(store.check(request({ event_id: 'e3' }), spec()).duplicate).toBe(true);
  });

  it('makes a duplicate of a running dispatch wait for its outcome: suppressed if it delivered, run if not', async () => {
    const store = new DedupStore(() => 0);
    const first = store.check(request(), spec());
    const second = store.check(request({ event_id: 'e2' }), spec());
    expect(second).toMatchObject({ duplicate: false, key: first.key, pending: expect.any(Promise) });
    store.settle(first.key!, false);
    await second.pending;
    const again = store.check(request({ event_id: 'e2' }), spec()); // the failed one delivered nothing: e2 runs
    expect(again).toEqual({ duplicate: false, key: first.key });
    const third = store.check(request({ event_id: 'e3' }), spec());
    store.settle(again.key!, true);
    await third.pending;
    expect(store.check(request({ event_id: 'e3' }), spec()).duplicate).toBe(true);
  });

  it('drops expired keys when new ones arrive', () => {
    let now = 0;
    const store = new DedupStore(() => now);
    admit(store, request({ source_id: 'a' }), spec({ window_seconds: 1 }));
    now = 5000;
    admit(store, request({ source_id: 'b' }), spec({ window_seconds: 1 }));
    expect(store.size).toBe(1);
  });
});

describe('resolvePlan', () => {
  const sub = {
    tools: ['log_alert', 'trigger_webhook'],
    tool_arguments: { trigger_webhook: { url: 'http://sub' }, publish_mqtt: { topic: 't' } },
    escalation: { threshold_consecutive: 3, additional_tools: ['publish_mqtt'] },
    dedup: spec({ window_seconds: 10 }),
  };

  it('takes the request tools, else the subscription defaults, else log_alert (an empty list counts as absent)', () => {
    expect(resolvePlan(request({ tools: ['capture_snapshot'] }), sub).tools).toEqual(['capture_snapshot']);
    expect(resolvePlan(request(), sub).tools).toEqual(['log_alert', 'trigger_webhook']);
    expect(resolvePlan(request({ tools: [] }), sub).tools).toEqual(['log_alert', 'trigger_webhook']);
    expect(resolvePlan(request(), undefined).tools).toEqual(['log_alert']);
    expect(resolvePlan(request(), { tools: [], tool_arguments: {} }).tools).toEqual(['log_alert']);
  });

  it('adds escalation tools at the threshold or when flagged; the request escalation overrides the subscription', () => {
    expect(resolvePlan(request({ consecutive_count: 2 }), sub).tools).toEqual(['log_alert', 'trigger_webhook']);
    expect(resolvePlan(request({ consecutive_count: 3 }), sub)).toMatchObject({
      tools: ['log_alert', 'trigger_webhook', 'publish_mqtt'],
      escalated: true,
    });
    expect(resolvePlan(request({ escalated: true }), sub).tools).toContain('publish_mqtt');
    const own = request({
      consecutive_count: 3,
      escalation: { threshold_consecutive: 5, additional_tools: ['capture_snapshot'] },
    });
    expect(resolvePlan(own, sub)).toMatchObject({ tools: ['log_alert', 'trigger_webhook'], escalated: false });
    own.consecutive_count = 5;
    expect(resolvePlan(own, sub).tools).toEqual(['log_alert', 'trigger_webhook', 'capture_snapshot']);
    expect(resolvePlan(request({ tools: ['log_alert', 'publish_mqtt'], escalated: true }), sub).tools).toEqual([
      'log_alert',
      'publish_mqtt',
    ]);
  });

  it('merges tool arguments per tool (request wins) and lets the request dedup replace the subscription dedup', () => {
    const plan = resolvePlan(request({ tool_arguments: { trigger_webhook: { url: 'http://req' } } }), sub);
    expect(plan.toolArguments).toEqual({ trigger_webhook: { url: 'http://req' }, publish_mqtt: { topic: 't' } });
    expect(plan.dedup?.window_seconds).toBe(10);
    expect(resolvePlan(request({ dedup: spec({ enabled: false }) }), sub).dedup?.enabled).toBe(false);
  });
});
