import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { newIngestJob } from './ports/resource-store.contract.js';
import { updateStatusWithRetry } from './ports/index.js';
import { KubernetesResourceStore, leaderElectionRules, OPERATOR_RULES, jobName } from './drivers/kubernetes/index.js';
import { FakeApiServer, type RecordedRequest } from './drivers/kubernetes/testing/fake-api-server.js';
import { startOperator, type StartedOperator } from './main.js';
import { captureLogs } from '../test/support/logs.js';

const INGESTJOBS_WATCH = (user: string) => (r: RecordedRequest) =>
  r.user === user && r.path === '/apis/argus.dev/v1alpha1/ingestjobs' && r.query.watch === 'true';

describe('argus operator against the fake API server', () => {
  let fake: FakeApiServer;
  let dir: string;
  let admin: KubernetesResourceStore;
  const running: StartedOperator[] = [];

  beforeEach(async () => {
    // Bound as the chart binds the operator: its rules everywhere, its Lease rules in its own namespace only.
    const operator = {
      bindings: [{ rules: OPERATOR_RULES }, { rules: leaderElectionRules('argus-operator'), namespace: 'argus' }],
    };
    fake = await FakeApiServer.start({ admin: 'admin', 'op-a': operator, 'op-b': operator });
    dir = await mkdtemp(path.join(os.tmpdir(), 'argus-operator-'));
    admin = new KubernetesResourceStore(fake.kubeConfig('admin'));
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((o) => o.close()));
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function start(identity: string, env: Record<string, string> = {}): Promise<StartedOperator> {
    const kubeconfig = path.join(dir, `${identity}.kubeconfig`);
    await writeFile(kubeconfig, fake.kubeConfig(identity).exportConfig());
    const operator = await startOperator(
      {
        KUBECONFIG: kubeconfig,
        ARGUS_DATA_DIR: dir,
        ARGUS_NAMESPACE: 'argus',
        ARGUS_WORKER_IMAGE: 'ghcr.io/argus/argus:test',
        ARGUS_WORKER_RESOURCES: '{"limits":{"nvidia.com/gpu":"1"}}',
        ARGUS_INGEST_PARALLELISM: '2',
        ARGUS_OPERATOR_HOST: '127.0.0.1',
        ARGUS_OPERATOR_PORT: '0',
        ARGUS_POD_NAME: identity,
        ARGUS_LEADER_ELECTION_LEASE_DURATION_SECONDS: '3',
        ARGUS_LEADER_ELECTION_RENEW_DEADLINE_SECONDS: '2',
        ARGUS_LEADER_ELECTION_RETRY_PERIOD_SECONDS: '0.2',
        ...env,
      },
      captureLogs().logger,
    );
    running.push(operator);
    return operator;
  }

  const get = async (operator: StartedOperator, url: string) => {
    const response = await fetch(`http://127.0.0.1:${operator.port}${url}`);
    return { status: response.status, text: await response.text() };
  };

  /** Resolves with the IngestJob's status once the operator has written one with this state. */
  const stateWritten = (name: string, state: string) =>
    fake.waitForRequest(
      (r) =>
        r.method === 'PUT' &&
        r.path === `/apis/argus.dev/v1alpha1/namespaces/media/ingestjobs/${name}/status` &&
        r.status === 200 &&
        r.response.status?.state === state,
    );

  it('leads, turns an IngestJob into an indexed Job, derives its state from Job and item results, serves its endpoints', async () => {
    const operator = await start('op-a');
    expect(await get(operator, '/healthz')).toEqual({ status: 200, text: 'ok\n' });
    await fake.waitForRequest(INGESTJOBS_WATCH('op-a'));

    await admin.create('IngestJob', newIngestJob('job-a', 'media', 3));
    const post = await fake.waitForRequest(
      (r) => r.method === 'POST' && r.path === '/apis/batch/v1/namespaces/media/jobs',
    );
    expect(post.status).toBe(201);
    expect(post.body.spec).toMatchObject({ completionMode: 'Indexed', completions: 2, parallelism: 2 });
    expect(post.body.spec.template.spec.containers[0].resources).toEqual({ limits: { 'nvidia.com/gpu': '1' } });
    await stateWritten('job-a', 'pending');

    // The Job controller's part: pods start, the workers write their items, the Job completes.
    const job = jobName((await admin.get('IngestJob', 'media', 'job-a'))!);
    fake.startPods('media', job);
    await stateWritten('job-a', 'running');
    for (const index of [0, 1, 2]) {
      await updateStatusWithRetry(admin, 'IngestJob', 'media', 'job-a', (latest) => ({
        ...latest.status,
        items: [
          ...(latest.status?.items ?? []),
          { index, identifier: `item-${index}.mp4`, videoId: `video-${index}`, status: 'success', embeddingsCount: 4 },
        ],
      }));
    }
    fake.finishPods('media', job, 'Succeeded');
    const done = await stateWritten('job-a', 'completed');
    expect(done.response.status).toMatchObject({ total: 3, completed: 3, progress: '3/3' });

    expect(await get(operator, '/readyz')).toEqual({ status: 200, text: 'ok: leading\n' });
    const metrics = await get(operator, '/metrics');
    expect(metrics.text).toMatch(/^argus_operator_leader 1$/m);
    expect(metrics.text).toMatch(/^argus_controller_reconcile_total\{controller="ingestjob",result="success"\} \d+$/m);
    expect(metrics.text).toMatch(/^argus_controller_queue_depth\{controller="ingestjob"\} \d+$/m);
    await fake.waitForRequest((r) => r.path === '/apis/events.k8s.io/v1/namespaces/argus/events');
    const [event] = fake.list('events.k8s.io', 'events');
    expect(event).toMatchObject({
      type: 'Normal',
      reason: 'LeaderElection',
      action: 'Acquire',
      note: 'op-a became leader',
      reportingController: 'argus.dev/operator',
      reportingInstance: 'op-a',
      regarding: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'argus', name: 'argus-operator' },
    });
    expect(event.eventTime).toMatch(/\.\d{6}Z$/);
    // Refusals a real server would make of a wrong request (404 reads and 409 races are part of the protocol).
    expect(fake.requests.filter((r) => [400, 403, 415, 422].includes(r.status ?? 0))).toEqual([]);
  });

  it('fails the unprocessed items with a clear message when the Job runs out of retries; deleting the IngestJob removes its Job', async () => {
    await start('op-a');
    await fake.waitForRequest(INGESTJOBS_WATCH('op-a'));
    await admin.create('IngestJob', newIngestJob('job-f', 'media', 2));
    await stateWritten('job-f', 'pending');
    const job = jobName((await admin.get('IngestJob', 'media', 'job-f'))!);
    await updateStatusWithRetry(admin, 'IngestJob', 'media', 'job-f', (latest) => ({
      ...latest.status,
      items: [{ index: 0, identifier: 'item-0.mp4', videoId: 'video-0', status: 'success', embeddingsCount: 1 }],
    }));
    // Both pods fail twice: past the back-off limit of 3 (the replacement made meanwhile is removed, counted failed).
    for (let round = 0; round < 2; round++) {
      fake.startPods('media', job);
      fake.finishPods('media', job, 'Failed');
    }
    const done = await stateWritten('job-f', 'completed_with_errors');
    const failed = done.response.status.items.find((i: { index: number }) => i.index === 1);
    expect(failed).toMatchObject({ status: 'error', identifier: 'item-1.mp4' });
    expect(failed.message).toMatch(
      /BackoffLimitExceeded.*worker pods failed 5 times, more than the back-off limit of 3 retries/,
    );

    await admin.delete('IngestJob', 'media', 'job-f');
    expect(fake.get('batch', 'jobs', 'media', job)).toBeUndefined();
    expect(fake.orphanedPods).toEqual([]);
  });

  /** Resolves with the IngestJob status the operator wrote once `match` holds for it. */
  const statusWritten = (namespace: string, name: string, match: (status: any) => boolean) =>
    fake.waitForRequest(
      (r) =>
        r.method === 'PUT' &&
        r.path === `/apis/argus.dev/v1alpha1/namespaces/${namespace}/ingestjobs/${name}/status` &&
        r.status === 200 &&
        match(r.response.status ?? {}),
    );
  const progressing = (status: any) => status.conditions?.find((c: any) => c.type === 'Progressing');
  const ingestJobEvents = (name: string) =>
    fake
      .list('events.k8s.io', 'events')
      .filter((e) => e.regarding.kind === 'IngestJob' && e.regarding.name === name)
      .map((e) => `${e.type} ${e.reason}${e.series ? ` x${e.series.count}` : ''}`);

  it("pods that never start keep the IngestJob pending with the scheduler's reason; it runs once a worker runs; Events tell each step once", async () => {
    await start('op-a');
    await fake.waitForRequest(INGESTJOBS_WATCH('op-a'));
    await admin.create('IngestJob', newIngestJob('job-p', 'media', 2));
    await stateWritten('job-p', 'pending');
    const job = jobName((await admin.get('IngestJob', 'media', 'job-p'))!);
    // The Job controller has started the Job (startTime) and its pods are Pending: `active` is 2, no worker runs.
    expect(fake.get('batch', 'jobs', 'media', job).status).toMatchObject({ active: 2, ready: 0 });

    const message = '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.';
    fake.unschedulablePods('media', job, message);
    const waiting = await statusWritten('media', 'job-p', (s) => progressing(s)?.reason === 'Unschedulable');
    expect(waiting.response.status.state).toBe('pending');
    expect(progressing(waiting.response.status).message).toContain(message);

    fake.startPods('media', job);
    await stateWritten('job-p', 'running');
    await updateStatusWithRetry(admin, 'IngestJob', 'media', 'job-p', (latest) => ({
      ...latest.status,
      items: [0, 1].map((index) => ({ index, identifier: `item-${index}.mp4`, status: 'success' as const })),
    }));
    fake.finishPods('media', job, 'Succeeded');
    await stateWritten('job-p', 'completed');
    await fake.waitForRequest(
      (r) =>
        r.method === 'POST' &&
        r.path === '/apis/events.k8s.io/v1/namespaces/media/events' &&
        r.body.reason === 'Completed',
    );
    expect(ingestJobEvents('job-p')).toEqual([
      'Normal JobCreated',
      'Warning Unschedulable',
      'Normal Running',
      'Normal Completed',
    ]);
    expect(fake.requests.filter((r) => [400, 403, 415, 422].includes(r.status ?? 0))).toEqual([]);
  });

  it("a wait that comes back (the kubelet alternates ErrImagePull and ImagePullBackOff) updates its Event's series", async () => {
    await start('op-a');
    await fake.waitForRequest(INGESTJOBS_WATCH('op-a'));
    await admin.create('IngestJob', newIngestJob('job-s', 'media', 1));
    await stateWritten('job-s', 'pending');
    const job = jobName((await admin.get('IngestJob', 'media', 'job-s'))!);
    const pull = 'failed to pull and unpack image "ghcr.io/argus/argus:test": not found';
    for (const [reason, message] of [
      ['ErrImagePull', pull],
      ['ImagePullBackOff', 'Back-off pulling image "ghcr.io/argus/argus:test"'],
      ['ErrImagePull', pull],
    ]) {
      fake.imagePullFails('media', job, reason, message);
      await statusWritten('media', 'job-s', (s) => progressing(s)?.reason === reason);
    }
    const series = await fake.waitForRequest(
      (r) => r.method === 'PUT' && r.path.startsWith('/apis/events.k8s.io/v1/namespaces/media/events/'),
    );
    expect(series.status).toBe(200);
    expect(series.body.series).toEqual({ count: 2, lastObservedTime: expect.stringMatching(/\.\d{6}Z$/) });
    expect(ingestJobEvents('job-s')).toEqual([
      'Normal JobCreated',
      'Warning ErrImagePull x2',
      'Warning ImagePullBackOff',
    ]);
  });

  it('cancel finishes within a reconcile when no worker ever ran (the Job has a startTime all the same)', async () => {
    await start('op-a');
    await fake.waitForRequest(INGESTJOBS_WATCH('op-a'));
    await admin.create('IngestJob', newIngestJob('job-c', 'media', 3));
    await stateWritten('job-c', 'pending');
    const job = jobName((await admin.get('IngestJob', 'media', 'job-c'))!);
    expect(fake.get('batch', 'jobs', 'media', job).status.startTime).toEqual(expect.any(String));

    const latest = (await admin.get('IngestJob', 'media', 'job-c'))!;
    await admin.update('IngestJob', { ...latest, spec: { ...latest.spec, cancelRequested: true } });
    const cancelled = await stateWritten('job-c', 'cancelled');
    expect(cancelled.response.status).toMatchObject({ skipped: 3, progress: '3/3' });
    expect(cancelled.response.status.items.map((i: { status: string }) => i.status)).toEqual([
      'skipped',
      'skipped',
      'skipped',
    ]);
    await fake.waitForRequest((r) => r.method === 'DELETE' && r.path.endsWith(`/jobs/${job}`));
    expect(fake.get('batch', 'jobs', 'media', job)).toBeUndefined();
  });

  it("a namespace not opted in: pending with the API's own FailedCreate message (missing ServiceAccount), then the missing ConfigMap, then running", async () => {
    await start('op-a', {
      ARGUS_WORKER_SERVICE_ACCOUNT: 'argus-ingest-worker',
      ARGUS_WORKER_ENV_FROM: 'configMap:argus-dataprep',
    });
    await fake.waitForRequest(INGESTJOBS_WATCH('op-a'));
    await admin.create('IngestJob', newIngestJob('job-n', 'other', 1));
    const refused = await statusWritten('other', 'job-n', (s) => progressing(s)?.reason === 'FailedCreate');
    expect(refused.response.status.state).toBe('pending');
    expect(progressing(refused.response.status).message).toMatch(
      /Error creating: pods "ingestjob-job-n-0-\*" is forbidden: error looking up service account other\/argus-ingest-worker: serviceaccount "argus-ingest-worker" not found .*operator\/README.md#namespaces/,
    );
    const event = await fake.waitForRequest(
      (r) =>
        r.method === 'POST' &&
        r.path === '/apis/events.k8s.io/v1/namespaces/other/events' &&
        r.body.reason === 'FailedCreate',
    );
    expect(event).toMatchObject({
      status: 201,
      body: { type: 'Warning', regarding: { kind: 'IngestJob', name: 'job-n' } },
    });

    // The chart's per-namespace opt-in renders the ServiceAccount first: the pods are made, the kubelet misses the ConfigMap.
    fake.put('', 'serviceaccounts', { metadata: { name: 'argus-ingest-worker', namespace: 'other' } });
    const job = jobName((await admin.get('IngestJob', 'other', 'job-n'))!);
    fake.startPods('other', job);
    const config = await statusWritten(
      'other',
      'job-n',
      (s) => progressing(s)?.reason === 'CreateContainerConfigError',
    );
    expect(progressing(config.response.status).message).toMatch(
      /configmap "argus-dataprep" not found.*operator\/README.md#namespaces/,
    );

    fake.put('', 'configmaps', { metadata: { name: 'argus-dataprep', namespace: 'other' } });
    fake.startPods('other', job);
    await statusWritten('other', 'job-n', (s) => s.state === 'running');
  });

  it('worker pods pass PodSecurity "restricted" in a namespace that enforces it', async () => {
    fake.put('', 'namespaces', {
      metadata: { name: 'media', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
    });
    await start('op-a');
    await fake.waitForRequest(INGESTJOBS_WATCH('op-a'));
    await admin.create('IngestJob', newIngestJob('job-r', 'media', 2));
    await stateWritten('job-r', 'pending');
    const job = jobName((await admin.get('IngestJob', 'media', 'job-r'))!);
    expect(fake.list('', 'events').map((e) => e.message)).toEqual([]);
    expect(fake.podsOf('media', job)).toHaveLength(2);
    fake.startPods('media', job);
    await stateWritten('job-r', 'running');
  });

  it('a standby is ready, does not reconcile, and takes over when the leader stops (Lease released)', async () => {
    const a = await start('op-a');
    await fake.waitForRequest(INGESTJOBS_WATCH('op-a'));
    const b = await start('op-b');
    let reads = 0;
    await fake.waitForRequest((r) => r.user === 'op-b' && r.path.includes('/leases/') && ++reads >= 3);
    expect(b.leading).toBe(false);
    expect(await get(b, '/readyz')).toEqual({ status: 200, text: 'ok: standby\n' });
    expect((await get(b, '/metrics')).text).toMatch(/^argus_operator_leader 0$/m);
    expect(fake.requests.filter((r) => r.user === 'op-b' && r.path.includes('ingestjobs'))).toEqual([]);

    await a.close();
    running.splice(running.indexOf(a), 1);
    const release = fake.requests
      .filter((r) => r.user === 'op-a' && r.method === 'PUT' && r.path.includes('/leases/'))
      .at(-1)!;
    expect(release.body.spec.holderIdentity).toBe('');
    await fake.waitForRequest(INGESTJOBS_WATCH('op-b'));
    await admin.create('IngestJob', newIngestJob('job-b', 'media'));
    const post = await fake.waitForRequest((r) => r.method === 'POST' && r.path.endsWith('/jobs'));
    expect(post.user).toBe('op-b');
    const lease = fake.get('coordination.k8s.io', 'leases', 'argus', 'argus-operator');
    expect(lease.spec).toMatchObject({ holderIdentity: 'op-b', leaseTransitions: 1 });
  });

  it('stops with every configuration problem listed', async () => {
    await expect(
      startOperator(
        { ARGUS_WORKER_TOLERATIONS: '[{"effect":"Sometimes"}]', ARGUS_WORKER_TYPO: '1' },
        captureLogs().logger,
      ),
    ).rejects.toThrow(/ARGUS_WORKER_IMAGE[\s\S]*ARGUS_WORKER_TYPO|ARGUS_WORKER_TYPO[\s\S]*ARGUS_WORKER_IMAGE/);
  });
});
