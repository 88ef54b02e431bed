/**
 * The chart's RBAC against the code: the operator, an ingest worker and dataprep run against the fake API server as
 * the chart's ServiceAccounts, under exactly the bindings the chart renders (RBAC by namespace, resourceNames). A
 * request the code makes that the chart does not grant is refused (403) and fails the test; a granted rule that no
 * request used fails it too.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { itemWorker } from '../operator/controllers/ingestjob/testing/item-worker.js';
import { KubernetesResourceStore } from '../operator/drivers/kubernetes/index.js';
import { FakeApiServer } from '../operator/drivers/kubernetes/testing/fake-api-server.js';
import { serviceAccountIdentities, unusedGrants } from '../operator/drivers/kubernetes/testing/fake-rbac.js';
import { startOperator, type StartedOperator } from '../operator/main.js';
import { newIngestJob } from '../operator/ports/resource-store.contract.js';
import { runWorker } from '../operator/worker-command.js';
import { IngestJobs } from '../services/dataprep/jobs/ingest-jobs.js';
import { captureLogs } from '../test/support/logs.js';
import { renderChart } from './helm-template.js';

const OPERATOR = 'system:serviceaccount:argus:rel-argus-operator';
const DATAPREP = 'system:serviceaccount:argus:rel-argus-dataprep';
const worker = (namespace: string) => `system:serviceaccount:${namespace}:rel-argus-ingest-worker`;

describe("the chart's RBAC is what the code needs, no more, no less", () => {
  let fake: FakeApiServer;
  let dir: string;
  let operator: StartedOperator | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'argus-chart-rbac-'));
  });
  afterEach(async () => {
    await operator?.close();
    operator = undefined;
    await fake?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function kubeconfig(user: string): Promise<string> {
    const file = path.join(dir, `${user.replaceAll(':', '_')}.kubeconfig`);
    await writeFile(file, fake.kubeConfig(user).exportConfig());
    return file;
  }

  /** The operator as the chart runs it (its rendered environment), with every finished job deleted at once. */
  async function startChartOperator(manifests: Awaited<ReturnType<typeof renderChart>>) {
    const deployment = manifests.find((m) => m.kind === 'Deployment' && m.metadata.name === 'rel-argus-operator');
    const env: Record<string, string> = {};
    for (const e of deployment?.spec.template.spec.containers[0].env ?? [])
      if (e.value !== undefined) env[e.name] = e.value;
    operator = await startOperator(
      {
        ...env,
        KUBECONFIG: await kubeconfig(OPERATOR),
        ARGUS_NAMESPACE: 'argus',
        ARGUS_POD_NAME: 'rel-argus-operator-0',
        ARGUS_DATA_DIR: dir,
        ARGUS_OPERATOR_HOST: '127.0.0.1',
        ARGUS_OPERATOR_PORT: '0',
        ARGUS_JOB_RETENTION_COUNT: '0',
        ARGUS_LEADER_ELECTION_LEASE_DURATION_SECONDS: '3',
        ARGUS_LEADER_ELECTION_RENEW_DEADLINE_SECONDS: '2',
        ARGUS_LEADER_ELECTION_RETRY_PERIOD_SECONDS: '0.2',
      },
      captureLogs().logger,
    );
  }

  /** One shard of the job's workers, as the worker pod runs it (`argus worker ingest`), as the worker's account. */
  async function runWorkerPod(namespace: string, name: string) {
    await runWorker(
      ['ingest', '--job', `${namespace}/${name}`],
      { KUBECONFIG: await kubeconfig(worker(namespace)) },
      captureLogs().logger,
      {
        ingest: async (_env, resources) => ({
          worker: itemWorker(resources, async () => ({ status: 'success' })),
          close: async () => undefined,
        }),
      },
      new AbortController().signal,
    );
  }

  const deletedByOperator = (namespace: string, name: string) =>
    fake.waitForRequest(
      (r) =>
        r.user === OPERATOR &&
        r.method === 'DELETE' &&
        r.path === `/apis/argus.dev/v1alpha1/namespaces/${namespace}/ingestjobs/${name}`,
    );

  it.each([
    ['every namespace, team-a opted in', ['worker.namespaces={team-a}'], 'argus', ['argus', 'team-a']],
    ['watchNamespace team-a', ['watchNamespace=team-a'], 'team-a', ['team-a']],
  ])('%s', async (_mode, set, servicesNamespace, workerNamespaces) => {
    const manifests = await renderChart(...set);
    const identities = serviceAccountIdentities(manifests);
    fake = await FakeApiServer.start({ admin: 'admin', ...identities });
    // One conflict on the operator's first status write: it re-reads the job live, as after any conflict.
    let conflicted = false;
    fake.intercept((r) => {
      if (conflicted || r.user !== OPERATOR || r.method !== 'PUT' || !r.path.endsWith('/status')) return undefined;
      conflicted = true;
      return {
        status: 409,
        body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409 },
      };
    });
    // The operator's Job watch opens only once it has read a Job live: right after creating one, which the watch
    // could otherwise have delivered first (a read from the cache).
    let jobRead!: () => void;
    const jobReadSeen = new Promise<undefined>((resolve) => (jobRead = () => resolve(undefined)));
    fake.intercept((r) =>
      r.user === OPERATOR && r.query.watch === 'true' && r.path.endsWith('/jobs') ? jobReadSeen : undefined,
    );
    void fake
      .waitForRequest((r) => r.user === OPERATOR && r.method === 'GET' && /\/jobs\/[^/]+$/.test(r.path))
      .then(jobRead);
    await startChartOperator(manifests);

    // dataprep creates a job and cancels another in its namespace; workers finish the first.
    const dataprepStore = new KubernetesResourceStore(fake.kubeConfig(DATAPREP));
    const dataprep = new IngestJobs({
      resources: dataprepStore,
      namespace: servicesNamespace,
      registerWorker: () => {},
    });
    const done = await dataprep.create(newIngestJob('x', servicesNamespace, 2).spec);
    const cancelled = await dataprep.create(newIngestJob('x', servicesNamespace, 1).spec);
    await fake.waitForRequest((r) => r.user === OPERATOR && r.method === 'POST' && r.path.endsWith('/jobs'));
    await dataprep.cancel(cancelled.metadata.name);
    expect((await dataprep.get(done.metadata.name))?.metadata.name).toBe(done.metadata.name);
    // Its pods wait for an image the kubelet fails to pull, again and again: the repeated wait updates its Event.
    fake.put('', 'serviceaccounts', { metadata: { name: 'rel-argus-ingest-worker', namespace: servicesNamespace } });
    const doneJob = `ingestjob-${done.metadata.name}`;
    for (const reason of ['ErrImagePull', 'ImagePullBackOff', 'ErrImagePull']) {
      fake.imagePullFails(servicesNamespace, doneJob, reason, `${reason}: the worker image`);
      await fake.waitForRequest(
        (r) =>
          r.user === OPERATOR &&
          r.path.endsWith(`/ingestjobs/${done.metadata.name}/status`) &&
          r.status === 200 &&
          r.response.status?.conditions?.some((c: { reason: string }) => c.reason === reason),
      );
    }
    await fake.waitForRequest((r) => r.user === OPERATOR && r.method === 'PUT' && r.path.includes('/events/'));
    await runWorkerPod(servicesNamespace, done.metadata.name);
    // A job in each other worker namespace (created by a user), run there by that namespace's worker account.
    const others = workerNamespaces.filter((ns) => ns !== servicesNamespace);
    for (const namespace of others) {
      await new KubernetesResourceStore(fake.kubeConfig('admin')).create(
        'IngestJob',
        newIngestJob('other', namespace, 1),
      );
      await runWorkerPod(namespace, 'other');
    }
    // Finished jobs are deleted at once (retention 0): the operator's last act on each.
    await deletedByOperator(servicesNamespace, done.metadata.name);
    await deletedByOperator(servicesNamespace, cancelled.metadata.name);
    for (const namespace of others) await deletedByOperator(namespace, 'other');
    jobRead();
    await operator!.close();
    operator = undefined;

    const accounts = Object.keys(identities).filter((user) =>
      [OPERATOR, DATAPREP, ...workerNamespaces.map(worker)].includes(user),
    );
    expect(accounts.sort()).toEqual([OPERATOR, DATAPREP, ...workerNamespaces.map(worker)].sort());
    expect(fake.requests.filter((r) => r.status === 403).map((r) => `${r.user} ${r.method} ${r.path}`)).toEqual([]);
    for (const user of accounts)
      expect({ user, unused: unusedGrants(identities[user], user, fake.requests) }).toEqual({ user, unused: [] });
  });
});
