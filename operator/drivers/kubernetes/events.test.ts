import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventRecorder, type EventSubject } from './events.js';
import { FakeApiServer } from './testing/fake-api-server.js';

const SUBJECT: EventSubject = {
  apiVersion: 'argus.dev/v1alpha1',
  kind: 'IngestJob',
  namespace: 'media',
  name: 'job-a',
  uid: 'uid-a',
};
const WAIT = { type: 'Warning', reason: 'ErrImagePull', action: 'Wait', note: 'not found' } as const;

describe('EventRecorder (events.k8s.io/v1)', () => {
  let fake: FakeApiServer;
  let recorder: EventRecorder;

  beforeEach(async () => {
    fake = await FakeApiServer.start();
    recorder = new EventRecorder(fake.kubeConfig(), { controller: 'argus.dev/operator', instance: 'op-a' });
  });
  afterEach(() => fake.close());

  const writes = () =>
    fake.requests.filter((r) => r.path.startsWith('/apis/events.k8s.io/')).map((r) => `${r.method} ${r.status}`);

  it('a repeat updates the series of the Event it repeats (count from 2), never makes another', async () => {
    await recorder.record(SUBJECT, WAIT);
    await recorder.record(SUBJECT, WAIT);
    await recorder.record(SUBJECT, WAIT);
    const [event] = fake.list('events.k8s.io', 'events');
    expect(fake.list('events.k8s.io', 'events')).toHaveLength(1);
    expect(event).toMatchObject({ reason: 'ErrImagePull', note: 'not found', series: { count: 3 } });
    expect(event.series.lastObservedTime).toMatch(/\.\d{6}Z$/);
    expect(writes()).toEqual(['POST 201', 'PUT 200', 'PUT 200']);
  });

  it('another note, reason or object is another Event', async () => {
    await recorder.record(SUBJECT, WAIT);
    await recorder.record(SUBJECT, { ...WAIT, note: 'unauthorized' });
    await recorder.record({ ...SUBJECT, name: 'job-b', uid: 'uid-b' }, WAIT);
    expect(fake.list('events.k8s.io', 'events').map((e) => [e.regarding.name, e.note, e.series])).toEqual([
      ['job-a', 'not found', undefined],
      ['job-a', 'unauthorized', undefined],
      ['job-b', 'not found', undefined],
    ]);
  });

  it('a repeat of an Event that expired meanwhile (404) makes a new one', async () => {
    await recorder.record(SUBJECT, WAIT);
    const [first] = fake.list('events.k8s.io', 'events');
    fake.remove('events.k8s.io', 'events', 'media', first.metadata.name);
    await recorder.record(SUBJECT, WAIT);
    expect(writes()).toEqual(['POST 201', 'PUT 404', 'POST 201']);
    expect(fake.list('events.k8s.io', 'events')).toEqual([expect.objectContaining({ reason: 'ErrImagePull' })]);
  });

  it('the fake refuses what a real server refuses of an Event update: a changed note, a series count below 2', async () => {
    await recorder.record(SUBJECT, WAIT);
    const [event] = fake.list('events.k8s.io', 'events');
    const put = (body: unknown) =>
      fetch(`${fake.url}/apis/events.k8s.io/v1/namespaces/media/events/${event.metadata.name}`, {
        method: 'PUT',
        headers: { authorization: 'Bearer token-admin', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await put({ ...event, note: 'changed' })).status).toBe(422);
    expect(
      (await put({ ...event, series: { count: 1, lastObservedTime: '2026-01-01T00:00:00.000000Z' } })).status,
    ).toBe(422);
  });
});
