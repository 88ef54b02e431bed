import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { BatchV1Api, CoreV1Api, Watch, type V1Job, type V1PodSpec } from '@kubernetes/client-node';
import { FakeApiServer } from './fake-api-server.js';

/** A pod spec that passes PodSecurity "restricted". */
const RESTRICTED: V1PodSpec = {
  restartPolicy: 'Never',
  securityContext: { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [
    {
      name: 'w',
      image: 'i',
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
    },
  ],
};

const indexed = (name: string, spec: Partial<V1PodSpec> = {}, over: Partial<V1Job['spec']> = {}): V1Job => ({
  metadata: { name },
  spec: {
    completionMode: 'Indexed',
    completions: 2,
    parallelism: 2,
    backoffLimit: 1,
    template: { spec: { ...RESTRICTED, ...spec } },
    ...over,
  } as V1Job['spec'],
});

describe('the fake Job controller and pod admission behave as a real cluster', () => {
  let fake: FakeApiServer;
  let batch: BatchV1Api;
  let core: CoreV1Api;

  beforeEach(async () => {
    fake = await FakeApiServer.start();
    batch = fake.kubeConfig().makeApiClient(BatchV1Api);
    core = fake.kubeConfig().makeApiClient(CoreV1Api);
  });
  afterEach(() => fake.close());

  const job = (name: string) => fake.get('batch', 'jobs', 'media', name);
  const failedCreates = async (name: string) =>
    (
      await core.listNamespacedEvent({
        namespace: 'media',
        fieldSelector: `involvedObject.uid=${job(name).metadata.uid}`,
      })
    ).items;

  it('sets startTime at the first sync and counts Pending pods as active, not ready', async () => {
    await batch.createNamespacedJob({ namespace: 'media', body: indexed('j') });
    expect(job('j').status).toMatchObject({ startTime: expect.any(String), active: 2, ready: 0 });
    const pods = fake.podsOf('media', 'j');
    expect(pods.map((p) => p.metadata.name)).toEqual([
      expect.stringMatching(/^j-0-[bcdfghjklmnpqrstvwxz2456789]{5}$/),
      expect.stringMatching(/^j-1-[bcdfghjklmnpqrstvwxz2456789]{5}$/),
    ]);
    expect(pods[0]).toMatchObject({
      metadata: { finalizers: ['batch.kubernetes.io/job-tracking'], labels: { 'batch.kubernetes.io/job-name': 'j' } },
      spec: { hostname: 'j-0' },
      status: { phase: 'Pending' },
    });
    fake.unschedulablePods('media', 'j', '0/1 nodes are available: 1 Insufficient nvidia.com/gpu.');
    expect(job('j').status).toMatchObject({ active: 2, ready: 0 });
    fake.startPods('media', 'j');
    expect(job('j').status).toMatchObject({ active: 2, ready: 2 });
  });

  it('a pod refused by admission leaves startTime set, no pod, and a FailedCreate Event on the Job, counted on repeats', async () => {
    await batch.createNamespacedJob({
      namespace: 'media',
      body: indexed('j', { serviceAccountName: 'argus-ingest-worker' }),
    });
    expect(job('j').status).toMatchObject({ startTime: expect.any(String), active: 0, ready: 0 });
    expect(fake.podsOf('media', 'j')).toEqual([]);
    const [event] = await failedCreates('j');
    expect(event).toMatchObject({
      type: 'Warning',
      reason: 'FailedCreate',
      count: 1,
      involvedObject: { kind: 'Job', name: 'j', uid: job('j').metadata.uid },
    });
    expect(event.message).toMatch(
      /^Error creating: pods "j-0-[a-z0-9]{5}" is forbidden: error looking up service account media\/argus-ingest-worker: serviceaccount "argus-ingest-worker" not found$/,
    );
    // The ServiceAccount appears: the controller's retry creates the pods.
    fake.put('', 'serviceaccounts', { metadata: { name: 'argus-ingest-worker', namespace: 'media' } });
    expect(fake.podsOf('media', 'j')).toHaveLength(2);
  });

  it('PodSecurity admission refuses a pod that violates the namespace enforce level, in the real wording', async () => {
    fake.put('', 'namespaces', {
      metadata: { name: 'media', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
    });
    await batch.createNamespacedJob({
      namespace: 'media',
      body: indexed('bare', { securityContext: undefined, containers: [{ name: 'w', image: 'i' }] }),
    });
    expect((await failedCreates('bare'))[0].message).toMatch(
      /^Error creating: pods "bare-0-[a-z0-9]{5}" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "w" must set securityContext.allowPrivilegeEscalation=false\), unrestricted capabilities \(container "w" must set securityContext.capabilities.drop=\["ALL"\]\), runAsNonRoot != true \(pod or container "w" must set securityContext.runAsNonRoot=true\), seccompProfile \(pod or container "w" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"\)$/,
    );
    await batch.createNamespacedJob({
      namespace: 'media',
      body: indexed('host', { hostNetwork: true, volumes: [{ name: 'h', hostPath: { path: '/' } }] }),
    });
    expect((await failedCreates('host'))[0].message).toMatch(
      /violates PodSecurity "restricted:latest": host namespaces \(hostNetwork=true\), hostPath volumes \(volume "h"\), restricted volume types \(volume "h" uses restricted volume type "hostPath"\)$/,
    );
    await batch.createNamespacedJob({ namespace: 'media', body: indexed('ok') });
    expect(await failedCreates('ok')).toEqual([]);
    expect(fake.podsOf('media', 'ok')).toHaveLength(2);
  });

  it('a missing ConfigMap does not refuse the pod: the kubelet leaves its container waiting (CreateContainerConfigError)', async () => {
    const containers = [{ ...RESTRICTED.containers[0], envFrom: [{ configMapRef: { name: 'argus-dataprep' } }] }];
    await batch.createNamespacedJob({ namespace: 'media', body: indexed('j', { containers }) });
    fake.startPods('media', 'j');
    const [pod] = fake.podsOf('media', 'j');
    expect(pod.status.phase).toBe('Pending');
    expect(pod.status.containerStatuses[0].state.waiting).toEqual({
      reason: 'CreateContainerConfigError',
      message: 'configmap "argus-dataprep" not found',
    });
    expect(job('j').status).toMatchObject({ active: 2, ready: 0 });
  });

  it('success: completedIndexes, SuccessCriteriaMet written before Complete, completionTime', async () => {
    await batch.createNamespacedJob({ namespace: 'media', body: indexed('j') });
    fake.startPods('media', 'j');
    fake.finishPods('media', 'j', 'Succeeded', [0]);
    expect(job('j').status).toMatchObject({ active: 1, ready: 1, succeeded: 1, completedIndexes: '0' });
    fake.finishPods('media', 'j', 'Succeeded');
    const status = job('j').status;
    expect(status).toMatchObject({
      active: 0,
      succeeded: 2,
      completedIndexes: '0,1',
      completionTime: expect.any(String),
    });
    expect(status.conditions.map((c: any) => c.type)).toEqual(['SuccessCriteriaMet', 'Complete']);
    expect(fake.podsOf('media', 'j').every((p) => p.metadata.finalizers.length === 0)).toBe(true);
  });

  it('failure: failed pods pass through uncountedTerminatedPods, FailureTarget comes before Failed', async () => {
    const seen: any[] = [];
    let sawFailed!: () => void;
    const failed = new Promise<void>((resolve) => (sawFailed = resolve));
    const watching = await new Watch(fake.kubeConfig()).watch(
      '/apis/batch/v1/namespaces/media/jobs',
      {},
      (_type, object) => {
        seen.push(structuredClone(object.status ?? {}));
        if ((object.status?.conditions ?? []).some((c: any) => c.type === 'Failed')) sawFailed();
      },
      () => undefined,
    );
    await batch.createNamespacedJob({ namespace: 'media', body: indexed('j') });
    fake.startPods('media', 'j');
    fake.finishPods('media', 'j', 'Failed');
    fake.startPods('media', 'j');
    fake.finishPods('media', 'j', 'Failed', [0]);
    const status = job('j').status;
    expect(status.failed).toBeGreaterThan(1);
    expect(status.conditions.map((c: any) => c.type)).toEqual(['FailureTarget', 'Failed']);
    expect(status.conditions[1]).toMatchObject({ reason: 'BackoffLimitExceeded' });
    // Finished pods stay (their logs), without the tracking finalizer; none is active.
    expect(fake.podsOf('media', 'j').map((p) => [p.status.phase, p.metadata.finalizers])).toEqual(
      fake.podsOf('media', 'j').map(() => ['Failed', []]),
    );
    await failed;
    watching.abort();
    // As watchers saw it: a failed pod's uid in uncountedTerminatedPods before the counter moved; FailureTarget alone
    // before Failed.
    const firstUncounted = seen.findIndex((s) => (s.uncountedTerminatedPods?.failed ?? []).length > 0);
    expect(firstUncounted).toBeGreaterThan(-1);
    expect(seen[firstUncounted].failed ?? 0).toBe(0);
    expect(seen.some((s) => s.conditions?.length === 1 && s.conditions[0].type === 'FailureTarget')).toBe(true);
  });

  it('suspend deletes the active pods (not counted as failed) and sets Suspended', async () => {
    await batch.createNamespacedJob({ namespace: 'media', body: indexed('j') });
    fake.startPods('media', 'j');
    fake.suspendJob('media', 'j', true);
    expect(fake.podsOf('media', 'j')).toEqual([]);
    const status = job('j').status;
    expect(status).toMatchObject({ active: 0, ready: 0 });
    expect(status.failed ?? 0).toBe(0);
    expect(status.conditions).toEqual([
      expect.objectContaining({ type: 'Suspended', status: 'True', reason: 'JobSuspended' }),
    ]);
  });
});
