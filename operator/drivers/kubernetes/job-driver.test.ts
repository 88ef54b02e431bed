import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { BatchV1Api, type V1Job, type V1OwnerReference } from '@kubernetes/client-node';
import type { IngestJob } from '../../api/index.js';
import { newIngestJob } from '../../ports/resource-store.contract.js';
import { JobWorkloadDriver } from './job-driver.js';
import { jobName, type WorkerPodTemplate } from './job-manifest.js';
import { OPERATOR_RULES } from './rbac.js';
import { KubernetesResourceStore } from './resource-store.js';
import { FakeApiServer } from './testing/fake-api-server.js';

const POD: WorkerPodTemplate = {
  image: 'ghcr.io/argus/argus:1.0.0',
  command: ['argus'],
  nodeSelector: { 'nvidia.com/gpu.present': 'true' },
  tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
  resources: { limits: { 'nvidia.com/gpu': '1', memory: '4Gi' }, requests: { cpu: '500m' } },
  serviceAccountName: 'argus-ingest-worker',
  envFrom: [{ configMapRef: { name: 'argus-dataprep' } }, { secretRef: { name: 'argus-dataprep' } }],
  ttlSecondsAfterFinished: 3600,
};
const SPEC = { worker: 'ingest', completions: 3, parallelism: 2, backoffLimit: 4 };

describe('JobWorkloadDriver at the HTTP boundary', () => {
  let fake: FakeApiServer;
  let store: KubernetesResourceStore;
  let driver: JobWorkloadDriver;
  let owner: IngestJob;

  beforeEach(async () => {
    fake = await FakeApiServer.start({
      admin: 'admin',
      operator: OPERATOR_RULES,
      'no-finalizers': OPERATOR_RULES.filter((r) => !r.resources.some((x) => x.endsWith('/finalizers'))),
    });
    store = new KubernetesResourceStore(fake.kubeConfig('admin'));
    driver = new JobWorkloadDriver(fake.kubeConfig('operator'), POD);
    owner = await store.create('IngestJob', newIngestJob('job-a', 'media'));
  });
  afterEach(() => fake.close());

  it('creates an indexed Job owned by the resource, placed and started as configured', async () => {
    await driver.ensure(owner, SPEC);
    const post = fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/jobs'))!;
    expect(post.path).toBe('/apis/batch/v1/namespaces/media/jobs');
    expect(post.contentType).toBe('application/json');
    expect(post.status).toBe(201);
    const job = post.body;
    expect(job.metadata.name).toBe('ingestjob-job-a');
    expect(job.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'argus.dev/v1alpha1',
        kind: 'IngestJob',
        name: 'job-a',
        uid: owner.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(job.spec).toMatchObject({
      completionMode: 'Indexed',
      completions: 3,
      parallelism: 2,
      backoffLimit: 4,
      ttlSecondsAfterFinished: 3600,
    });
    const pod = job.spec.template.spec;
    expect(pod).toMatchObject({
      restartPolicy: 'Never',
      serviceAccountName: 'argus-ingest-worker',
      nodeSelector: POD.nodeSelector,
      tolerations: POD.tolerations,
    });
    expect(pod.containers[0]).toMatchObject({
      image: POD.image,
      command: ['argus', 'worker', 'ingest', '--job', 'media/job-a', '--completions', '3', '--health-port', '8090'],
      resources: POD.resources,
      envFrom: POD.envFrom,
    });
    expect(job.metadata.labels).toMatchObject({ 'argus.dev/kind': 'IngestJob', 'argus.dev/name': 'job-a' });
    expect(pod.containers[0].command).not.toContain('--index');
    expect(fake.collected).toEqual([]);
  });

  it('is idempotent: a second ensure leaves the existing Job as it is', async () => {
    await driver.ensure(owner, SPEC);
    await driver.ensure(owner, { ...SPEC, completions: 5 });
    expect(fake.list('batch', 'jobs')).toHaveLength(1);
    expect(fake.list('batch', 'jobs')[0].spec.completions).toBe(3);
  });

  it('names the Job of a 253-character resource so that every pod hostname <job>-<index> fits 63', async () => {
    const long = await store.create('IngestJob', newIngestJob(`${'a'.repeat(120)}.${'b'.repeat(132)}`, 'media'));
    await driver.ensure(long, { ...SPEC, completions: 10_000, parallelism: 10 });
    const [job] = fake.list('batch', 'jobs');
    expect(job.metadata.name).toBe(jobName(long));
    expect(`${job.metadata.name}-9999`.length).toBeLessThanOrEqual(63);
    expect(job.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(
      jobName({ ...long, metadata: { ...long.metadata, name: `${'a'.repeat(120)}.${'b'.repeat(133)}` } }),
    ).not.toBe(job.metadata.name);
  });

  it('the fake refuses what a real API server refuses: a Job whose pod hostnames pass 63, a stripped owner reference', async () => {
    const batch = fake.kubeConfig('admin').makeApiClient(BatchV1Api);
    const job = (name: string, ownerReferences?: Partial<V1OwnerReference>[]): V1Job => ({
      metadata: { name, ownerReferences: ownerReferences as V1OwnerReference[] },
      spec: {
        completionMode: 'Indexed',
        completions: 100,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'w', image: 'i' }] } },
      },
    });
    await expect(batch.createNamespacedJob({ namespace: 'media', body: job('x'.repeat(61)) })).rejects.toMatchObject({
      code: 422,
    });
    await expect(
      batch.createNamespacedJob({
        namespace: 'media',
        body: job('y', [{ apiVersion: 'argus.dev/v1alpha1', kind: 'IngestJob', name: 'job-a' }]),
      }),
    ).rejects.toMatchObject({ code: 422 });
  });

  it('needs update on the owner kind finalizers to set blockOwnerDeletion (403 without)', async () => {
    const limited = new JobWorkloadDriver(fake.kubeConfig('no-finalizers'), POD);
    await expect(limited.ensure(owner, SPEC)).rejects.toThrow(/403 Forbidden/);
  });

  it('inspects: none, pending pods (not running), why they wait, running, complete, failed with retries exhausted', async () => {
    fake.put('', 'serviceaccounts', { metadata: { name: 'argus-ingest-worker', namespace: 'media' } });
    fake.put('', 'configmaps', { metadata: { name: 'argus-dataprep', namespace: 'media' } });
    fake.put('', 'secrets', { metadata: { name: 'argus-dataprep', namespace: 'media' } });
    expect(await driver.inspect(owner)).toBeUndefined();
    await driver.ensure(owner, SPEC);
    const name = jobName(owner);
    // The Job controller started the Job and made 2 pods (parallelism): active, but no worker runs.
    expect(await driver.inspect(owner)).toEqual({
      active: 2,
      ready: 0,
      succeeded: 0,
      failed: 0,
      complete: false,
      startTime: expect.any(String),
    });
    fake.unschedulablePods('media', name, '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.');
    expect((await driver.inspect(owner))?.waiting).toEqual({
      reason: 'Unschedulable',
      message: '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.',
    });
    fake.imagePullFails('media', name, 'ImagePullBackOff', 'Back-off pulling image "ghcr.io/argus/argus:1.0.0"');
    expect((await driver.inspect(owner))?.waiting).toEqual({
      reason: 'ImagePullBackOff',
      message: 'Back-off pulling image "ghcr.io/argus/argus:1.0.0"',
    });
    fake.startPods('media', name);
    expect(await driver.inspect(owner)).toMatchObject({ active: 2, ready: 2 });
    expect((await driver.inspect(owner))?.waiting).toBeUndefined();
    fake.finishPods('media', name, 'Succeeded');
    fake.startPods('media', name);
    fake.finishPods('media', name, 'Succeeded');
    expect(await driver.inspect(owner)).toMatchObject({ succeeded: 3, complete: true });
  });

  it('inspects a Job whose pods are refused: FailedCreate with the API message and the opt-in hint', async () => {
    await driver.ensure(owner, SPEC);
    const status = await driver.inspect(owner);
    expect(status).toMatchObject({ active: 0, ready: 0, startTime: expect.any(String) });
    expect(status?.waiting?.reason).toBe('FailedCreate');
    expect(status?.waiting?.message).toMatch(
      /^Error creating: pods "ingestjob-job-a-0-\*" is forbidden: error looking up service account media\/argus-ingest-worker: serviceaccount "argus-ingest-worker" not found \(opt this namespace in: worker.namespaces, see operator\/README.md#namespaces\)$/,
    );
  });

  it('worker pods pass PodSecurity "restricted": read-only root, non-root, no capabilities, RuntimeDefault seccomp', async () => {
    fake.put('', 'namespaces', {
      metadata: { name: 'media', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
    });
    fake.put('', 'serviceaccounts', { metadata: { name: 'argus-ingest-worker', namespace: 'media' } });
    await driver.ensure(owner, SPEC);
    expect(fake.list('', 'events')).toEqual([]);
    const [pod] = fake.podsOf('media', jobName(owner));
    expect(pod.spec.containers[0].securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    // The models are the image's (its ARGUS_MODELS_DIR): no volume hides them, no variable moves them.
    expect(pod.spec.containers[0].volumeMounts.map((m: { mountPath: string }) => m.mountPath)).toEqual([
      '/tmp',
      '/var/lib/argus/data',
    ]);
    expect(pod.spec.containers[0].env.map((e: { name: string }) => e.name)).not.toContain('ARGUS_MODELS_DIR');
  });

  it('fails a Job past its back-off limit as the Job controller does', async () => {
    fake.put('', 'serviceaccounts', { metadata: { name: 'argus-ingest-worker', namespace: 'media' } });
    await driver.ensure(owner, SPEC);
    const name = jobName(owner);
    for (let round = 0; round < 3 && !(await driver.inspect(owner))?.failure; round++) {
      fake.startPods('media', name);
      fake.finishPods('media', name, 'Failed');
    }
    const failed = await driver.inspect(owner);
    expect(failed?.complete).toBe(false);
    expect(failed?.failure?.reason).toBe('BackoffLimitExceeded');
    expect(failed?.failure?.message).toMatch(/failed 6 times.*back-off limit of 4/);
  });

  it('removes with propagationPolicy Background (no orphaned pods); removing nothing is no error', async () => {
    await driver.ensure(owner, SPEC);
    await driver.remove(owner);
    const del = fake.requests.find((r) => r.method === 'DELETE')!;
    expect(del.path).toBe('/apis/batch/v1/namespaces/media/jobs/ingestjob-job-a');
    expect(del.query.propagationPolicy).toBe('Background');
    expect(fake.orphanedPods).toEqual([]);
    expect(fake.list('batch', 'jobs')).toEqual([]);
    await driver.remove(owner);
  });

  it('the Job goes with its owner (garbage collection through the owner reference)', async () => {
    await driver.ensure(owner, SPEC);
    await store.delete('IngestJob', 'media', 'job-a');
    expect(fake.list('batch', 'jobs')).toEqual([]);
  });

  it('does not take over the Job of a deleted namesake that is still being collected', async () => {
    await driver.ensure(owner, SPEC);
    const stale = fake.get('batch', 'jobs', 'media', jobName(owner));
    await store.delete('IngestJob', 'media', 'job-a');
    fake.put('batch', 'jobs', { ...stale, metadata: { ...stale.metadata, resourceVersion: undefined } });
    const again = await store.create('IngestJob', newIngestJob('job-a', 'media'));
    expect(await driver.inspect(again)).toBeUndefined();
    await expect(driver.ensure(again, SPEC)).rejects.toThrow(/earlier IngestJob/);
  });

  it('tells listeners of changes of its Jobs (watched by label), so controllers need not wait for a resync', async () => {
    const seen: string[] = [];
    let resolveSeen!: () => void;
    const complete = new Promise<void>((r) => (resolveSeen = r));
    const stop = driver.onChange((o) => {
      seen.push(`${o.kind} ${o.namespace}/${o.name}`);
      if (seen.length >= 2) resolveSeen();
    });
    await fake.waitForRequest((r) => r.path === '/apis/batch/v1/jobs' && r.query.watch === 'true');
    // Not the operator's: no owner to tell.
    fake.put('batch', 'jobs', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'other', namespace: 'media' } });
    fake.put('', 'serviceaccounts', { metadata: { name: 'argus-ingest-worker', namespace: 'media' } });
    await driver.ensure(owner, SPEC);
    await complete;
    expect(new Set(seen)).toEqual(new Set(['IngestJob media/job-a']));
    const watch = fake.requests.find((r) => r.query.watch === 'true')!;
    expect(watch.query.labelSelector).toBe('app.kubernetes.io/managed-by=argus-operator');
    stop();
  });
});
