import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ResourceStore } from '../../operator/ports/index.js';
import { RuleBook, ruleObjectName } from './rules/rule-book.js';
import { serveCameraRules, TEST_NAMESPACE, type ServedCameraRules } from './testing/serve-app.js';

let controlPlaneDir: string;
let served: ServedCameraRules & { store: ResourceStore };

const post = (body: unknown, base = served.url) =>
  fetch(`${base}/rules/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  controlPlaneDir = await mkdtemp(path.join(os.tmpdir(), 'camera-rules-store-'));
  served = await serveCameraRules({ controlPlaneDir });
});

afterAll(async () => {
  await served?.close();
  await rm(controlPlaneDir, { recursive: true, force: true });
});

describe('rules', () => {
  it('adds a rule (null camera and source: any), lists it and gets it by id, with count 0', async () => {
    const res = await post({ id: 'people at the door', label: 'person', action: 'alert', camera: 'front_door' });
    expect(res.status).toBe(200);
    const rule = {
      id: 'people at the door',
      label: 'person',
      action: 'alert',
      camera: 'front_door',
      source: null,
      event_type: 'end',
      count: 0,
    };
    expect(await res.json()).toEqual(rule);
    expect(await (await fetch(`${served.url}/rules/`)).json()).toEqual([rule]);
    const one = await fetch(`${served.url}/rules/${encodeURIComponent('people at the door')}`);
    expect(await one.json()).toEqual(rule);
    // Stored as a CameraRule resource named after the id.
    const stored = await served.store.get('CameraRule', TEST_NAMESPACE, ruleObjectName('people at the door'));
    expect(stored?.spec).toEqual({
      id: 'people at the door',
      label: 'person',
      action: 'alert',
      camera: 'front_door',
      eventType: 'end',
    });
  });

  it('answers 400 when the id exists, and ignores a count sent by the client', async () => {
    const res = await post({ id: 'people at the door', label: 'car', action: 'summarize' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: "Rule with id 'people at the door' already exists" });
    const counted = await post({ id: 'cars', label: 'car', action: 'summarize', count: 99, event_type: 'new' });
    expect(await counted.json()).toMatchObject({ id: 'cars', count: 0, event_type: 'new' });
  });

  it('accepts "add to search" as the original spelling of add_to_search', async () => {
    const res = await post({ id: 'index people', label: 'person', action: 'add to search', camera: null });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ action: 'add_to_search', camera: null });
  });

  it('refuses an unknown action 422, listing the known ones, and every other invalid field at once', async () => {
    const res = await post({ id: 'x', action: 'teleport', camera: 7 });
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: Array<{ loc: string[]; msg: string; type: string }> };
    expect(detail).toEqual(
      expect.arrayContaining([
        {
          loc: ['body', 'action'],
          msg: 'action must be one of: add_to_search, summarize, alert ("add to search" is accepted for add_to_search)',
          type: 'any.only',
        },
        { loc: ['body', 'label'], msg: 'label is required', type: 'any.required' },
        { loc: ['body', 'camera'], msg: expect.any(String), type: 'string.base' },
      ]),
    );
    const unknown = await post({ id: 'y', label: 'person', action: 'alert', threshold: 3 });
    expect(unknown.status).toBe(422);
    expect(((await unknown.json()) as any).detail[0]).toMatchObject({ loc: ['body', 'threshold'] });
  });

  it('deletes a rule, then answers 404 for it', async () => {
    const res = await fetch(`${served.url}/rules/cars`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 'cars', label: 'car' });
    for (const method of ['GET', 'DELETE']) {
      const gone = await fetch(`${served.url}/rules/cars`, { method });
      expect(gone.status).toBe(404);
      expect(await gone.json()).toEqual({ detail: "Rule 'cars' not found" });
    }
  });

  it('shows the events a rule matched in count, also when replicas claim at the same time', async () => {
    const replicaA = new RuleBook(served.store, TEST_NAMESPACE, served.logger);
    const replicaB = new RuleBook(served.store, TEST_NAMESPACE, served.logger);
    const now = new Date();
    const claims = await Promise.all([
      replicaA.claim('index people', 'e1', 'porch', now, 60_000),
      replicaB.claim('index people', 'e2', 'porch', now, 60_000),
      replicaA.claim('index people', 'e3', 'porch', now, 60_000),
      replicaB.claim('index people', 'e3', 'porch', now, 60_000),
    ]);
    // e3 claimed by both at once: exactly one wins, the other finds it held.
    expect(claims.slice(0, 2)).toEqual(['claimed', 'claimed']);
    expect(claims.slice(2).sort()).toEqual(['claimed', 'held']);
    const rule = await (await fetch(`${served.url}/rules/index%20people`)).json();
    expect(rule).toMatchObject({ count: 3 });
    expect(await replicaA.claim('no such rule', 'e4', 'porch', now, 60_000)).toBe('done');
  });

  it('shares rules between replicas: one adds, the other sees it and refuses the same id', async () => {
    const other = await serveCameraRules({ rules: new RuleBook(served.store, TEST_NAMESPACE, served.logger) });
    try {
      expect((await post({ id: 'shared', label: 'dog', action: 'summarize' }, other.url)).status).toBe(200);
      expect(await (await fetch(`${served.url}/rules/shared`)).json()).toMatchObject({ id: 'shared' });
      expect((await post({ id: 'shared', label: 'dog', action: 'summarize' })).status).toBe(400);
    } finally {
      await other.close();
    }
  });

  it('keeps the rules across a restart', async () => {
    const before = await (await fetch(`${served.url}/rules/`)).json();
    await served.close();
    served = await serveCameraRules({ controlPlaneDir });
    expect(await (await fetch(`${served.url}/rules/`)).json()).toEqual(before);
    expect((before as unknown[]).length).toBe(3);
  });

  it('answers 503 without internals when the rule store does not answer', async () => {
    const broken = new Proxy(served.store, {
      get: (target, key) =>
        ['list', 'get', 'create', 'delete'].includes(String(key))
          ? async () => {
              throw new Error('connect ECONNREFUSED 10.0.0.1:6443 /var/run/secrets/token');
            }
          : Reflect.get(target, key),
    });
    const down = await serveCameraRules({ rules: new RuleBook(broken, TEST_NAMESPACE, served.logger) });
    try {
      for (const res of [
        await fetch(`${down.url}/rules/`),
        await fetch(`${down.url}/rules/x`),
        await post({ id: 'z', label: 'person', action: 'alert' }, down.url),
      ]) {
        expect(res.status).toBe(503);
        expect(await res.json()).toEqual({ detail: 'The rule store (control plane) is unavailable' });
      }
    } finally {
      await down.close();
    }
  });
});
