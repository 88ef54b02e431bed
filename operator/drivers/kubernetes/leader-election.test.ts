import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { CoordinationV1Api, EventsV1Api } from '@kubernetes/client-node';
import { LeaderElector, type LeaderElectionTiming } from './leader-election.js';
import { leaderElectionRules } from './rbac.js';
import { FakeApiServer } from './testing/fake-api-server.js';

// Small enough for a quick test, large enough that a loaded CI machine does not miss a renewal.
const TIMING: LeaderElectionTiming = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 200 };
const LEASE_PATH = '/apis/coordination.k8s.io/v1/namespaces/argus/leases/argus-operator';
const SIX_DIGITS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A candidate whose leadership changes land in a shared, ordered log; `started` resolves when it leads. */
function candidate(fake: FakeApiServer, identity: string, log: string[]) {
  let resolveStarted!: () => void;
  let resolveStopped!: () => void;
  const started = new Promise<void>((r) => (resolveStarted = r));
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  const elector = new LeaderElector(fake.kubeConfig(identity), {
    ...TIMING,
    namespace: 'argus',
    name: 'argus-operator',
    identity,
    onStartedLeading: () => {
      log.push(`${identity} started`);
      resolveStarted();
    },
    onStoppedLeading: () => {
      log.push(`${identity} stopped`);
      resolveStopped();
    },
  });
  return { elector, started, stopped };
}

describe('LeaderElector against the fake API server', () => {
  let fake: FakeApiServer;
  const electors: LeaderElector[] = [];

  beforeEach(async () => {
    // As the chart binds the operator: its Lease rules in a Role in its own namespace only.
    const lease = { bindings: [{ rules: leaderElectionRules('argus-operator'), namespace: 'argus' }] };
    fake = await FakeApiServer.start({
      a: lease,
      b: lease,
      admin: 'admin',
      elsewhere: { bindings: [{ rules: leaderElectionRules('argus-operator'), namespace: 'kube-system' }] },
      'other-lease': { bindings: [{ rules: leaderElectionRules('kube-controller-manager'), namespace: 'argus' }] },
    });
  });
  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.stop()));
    await fake.close();
  });

  function run(identity: string, log: string[]) {
    const c = candidate(fake, identity, log);
    electors.push(c.elector);
    c.elector.start();
    return c;
  }

  it('creates the Lease with a name and six-digit MicroTimes, then renews it with the resourceVersion read', async () => {
    const log: string[] = [];
    const a = run('a', log);
    await a.started;
    await fake.waitForRequest((r) => r.method === 'PUT' && r.user === 'a' && r.status === 200);
    const create = fake.requests.find((r) => r.method === 'POST')!;
    expect(create.path).toBe('/apis/coordination.k8s.io/v1/namespaces/argus/leases');
    expect(create.body.metadata.name).toBe('argus-operator');
    expect(create.body.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 3, leaseTransitions: 0 });
    expect(create.body.spec.acquireTime).toMatch(SIX_DIGITS);
    expect(create.body.spec.renewTime).toMatch(SIX_DIGITS);
    const renew = fake.requests.find((r) => r.method === 'PUT')!;
    expect(renew.path).toBe(LEASE_PATH);
    expect(renew.contentType).toBe('application/json');
    const readBefore = fake.requests.slice(0, fake.requests.indexOf(renew)).filter((r) => r.method === 'GET');
    expect(renew.body.metadata.resourceVersion).toBe(readBefore.at(-1)!.response.metadata.resourceVersion);
    expect(renew.body.spec).toMatchObject({
      holderIdentity: 'a',
      leaseTransitions: 0,
      acquireTime: create.body.spec.acquireTime,
    });
    expect(renew.body.spec.renewTime).toMatch(SIX_DIGITS);
    expect(a.elector.isLeader).toBe(true);
  });

  it('the fake refuses what a real API server refuses: Lease and Event MicroTimes with three fractional digits (400)', async () => {
    const api = fake.kubeConfig('admin').makeApiClient(CoordinationV1Api);
    const error = await api
      .createNamespacedLease({
        namespace: 'argus',
        body: { metadata: { name: 'x' }, spec: { holderIdentity: 'x', renewTime: new Date() as never } },
      })
      .catch((e: { code: number; body: string }) => e);
    expect(error).toMatchObject({ code: 400 });
    expect(String((error as { body: string }).body)).toMatch(/cannot parse \\".\d{3}Z\\" as \\".000000\\"/);
    const events = fake.kubeConfig('admin').makeApiClient(EventsV1Api);
    const event = {
      metadata: { name: 'x.1' },
      eventTime: new Date() as never,
      reportingController: 'argus.dev/operator',
      reportingInstance: 'a',
      action: 'Acquire',
      reason: 'LeaderElection',
      type: 'Normal',
      regarding: { kind: 'Lease', name: 'x' },
    };
    await expect(events.createNamespacedEvent({ namespace: 'argus', body: event })).rejects.toMatchObject({
      code: 400,
    });
  });

  it('of two candidates only one leads; when the leader cannot renew it stops before the other takes over', async () => {
    const log: string[] = [];
    const a = run('a', log);
    await a.started;
    const b = run('b', log);
    // b keeps finding the Lease held and renewed.
    let bReads = 0;
    await fake.waitForRequest((r) => r.user === 'b' && r.method === 'GET' && ++bReads >= 5);
    expect(log).toEqual(['a started']);
    expect(b.elector.isLeader).toBe(false);

    // a's renewals stop reaching the server.
    fake.intercept((r) => (r.user === 'a' ? { status: 500, body: {} } : undefined));
    await b.started;
    expect(log).toEqual(['a started', 'a stopped', 'b started']);
    const lease = fake.get('coordination.k8s.io', 'leases', 'argus', 'argus-operator');
    expect(lease.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    const takeOver = fake.requests.find((r) => r.user === 'b' && r.method === 'PUT' && r.status === 200)!;
    expect(takeOver.body.metadata.resourceVersion).toEqual(expect.any(String));
    expect(takeOver.body.spec.acquireTime).toMatch(SIX_DIGITS);
  });

  it('a standby judges expiry on its own clock, not by renewTime (a skewed clock does not hand it the Lease)', async () => {
    const admin = fake.kubeConfig('admin').makeApiClient(CoordinationV1Api);
    await admin.createNamespacedLease({
      namespace: 'argus',
      body: {
        metadata: { name: 'argus-operator' },
        spec: {
          holderIdentity: 'ghost',
          leaseDurationSeconds: 1,
          renewTime: '2001-01-01T00:00:00.000000Z' as never,
          leaseTransitions: 3,
        },
      },
    });
    const log: string[] = [];
    const b = run('b', log);
    await b.started;
    const mine = fake.requests.filter((r) => r.user === 'b');
    // Several reads saw the same record before the take-over: it waited a lease duration from its first sight.
    expect(mine.slice(0, 3).map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
    expect(fake.get('coordination.k8s.io', 'leases', 'argus', 'argus-operator').spec).toMatchObject({
      holderIdentity: 'b',
      leaseTransitions: 4,
    });
  });

  it('releases the Lease on stop, so the standby takes over without waiting for it to lapse', async () => {
    const log: string[] = [];
    const a = run('a', log);
    await a.started;
    const b = run('b', log);
    await fake.waitForRequest((r) => r.user === 'b' && r.method === 'GET');
    await a.elector.stop();
    const release = fake.requests.filter((r) => r.user === 'a' && r.method === 'PUT').at(-1)!;
    expect(release.body.spec.holderIdentity).toBe('');
    await b.started;
    expect(log).toEqual(['a started', 'a stopped', 'b started']);
    expect(fake.get('coordination.k8s.io', 'leases', 'argus', 'argus-operator').spec.leaseTransitions).toBe(1);
  });

  it('needs no more than leaderElectionRules in its own namespace (leases create; get and update of its Lease)', async () => {
    const log: string[] = [];
    const a = run('a', log);
    await a.started;
    await fake.waitForRequest((r) => r.method === 'PUT' && r.user === 'a');
    expect(fake.requests.filter((r) => r.status === 403)).toEqual([]);
  });

  it('is refused a Lease outside the namespace of its Role, and a Lease its resourceNames do not name', async () => {
    const refused = (user: string) =>
      fake.waitForRequest((r) => r.user === user && r.status === 403).then((r) => `${r.method} ${r.path}`);
    electors.push(candidate(fake, 'elsewhere', []).elector, candidate(fake, 'other-lease', []).elector);
    for (const e of electors) e.start();
    expect(await refused('elsewhere')).toBe(`GET ${LEASE_PATH}`);
    // Its rules name another Lease: reading this one is refused, so it never runs for it.
    expect(await refused('other-lease')).toBe(`GET ${LEASE_PATH}`);
    expect(electors.map((e) => e.isLeader)).toEqual([false, false]);
  });

  it('refuses timings where a leader could still act after a standby took over', () => {
    expect(
      () =>
        new LeaderElector(fake.kubeConfig('a'), {
          leaseDurationMs: 1000,
          renewDeadlineMs: 1000,
          retryPeriodMs: 100,
          namespace: 'argus',
          name: 'x',
          identity: 'a',
          onStartedLeading: () => undefined,
          onStoppedLeading: () => undefined,
        }),
    ).toThrow(/leaseDuration > renewDeadline/);
  });
});
