import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { CameraWatcher } from '../../api/index.js';
import type { LongRunningWorkloadSpec, WorkloadOwner } from '../../ports/index.js';
import { deploymentStatus } from './deployment-status.js';
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
  resources: { limits: { 'nvidia.com/gpu': '1' } },
  serviceAccountName: 'argus-worker',
  envFrom: [{ configMapRef: { name: 'argus-camera-rules' } }],
  ttlSecondsAfterFinished: 3600,
};
const SPEC: LongRunningWorkloadSpec = { mode: 'long-running', worker: 'camera-watcher', replicas: 1 };

describe('JobWorkloadDriver: long-running workloads as apps/v1 Deployments', () => {
  let fake: FakeApiServer;
  let store: KubernetesResourceStore;
  let driver: JobWorkloadDriver;
  let owner: CameraWatcher;

  beforeEach(async () => {
    fake = await FakeApiServer.start({ admin: 'admin', operator: OPERATOR_RULES });
    store = new KubernetesResourceStore(fake.kubeConfig('admin'));
    driver = new JobWorkloadDriver(fake.kubeConfig('operator'), POD);
    owner = await store.create('CameraWatcher', {
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'CameraWatcher',
      metadata: { name: 'front-door', namespace: 'media' },
      spec: { camera: 'front_door', enabled: true },
    });
    fake.put('', 'configmaps', { metadata: { name: 'argus-camera-rules', namespace: 'media' } });
  });
  afterEach(() => fake.close());

  it('makes a Deployment owned by the resource, with the Job pod template, restartPolicy Always and --resource', async () => {
    fake.put('', 'serviceaccounts', { metadata: { name: 'argus-worker', namespace: 'media' } });
    await driver.ensure(owner, SPEC);
    await driver.ensure(owner, { ...SPEC, replicas: 3 });
    const posts = fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/deployments'));
    expect(posts.map((r) => [r.path, r.status])).toEqual([
      ['/apis/apps/v1/namespaces/media/deployments', 201],
      ['/apis/apps/v1/namespaces/media/deployments', 409],
    ]);
    const [deployment] = fake.list('apps', 'deployments');
    expect(deployment.metadata.name).toBe(jobName(owner));
    expect(deployment.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'argus.dev/v1alpha1',
        kind: 'CameraWatcher',
        name: 'front-door',
        uid: owner.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(deployment.metadata.labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'argus-operator',
      'argus.dev/kind': 'CameraWatcher',
      'argus.dev/name': 'front-door',
    });
    expect(deployment.spec).toMatchObject({ replicas: 1, strategy: { type: 'Recreate' } });
    const pod = deployment.spec.template.spec;
    expect(pod).toMatchObject({
      restartPolicy: 'Always',
      serviceAccountName: 'argus-worker',
      nodeSelector: POD.nodeSelector,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    });
    expect(pod.containers[0].command).toEqual([
      'argus',
      'worker',
      'camera-watcher',
      '--resource',
      'media/front-door',
      '--health-port',
      '8090',
    ]);
    // A worker that hangs is restarted: its liveness probe asks the worker's own /healthz.
    expect(pod.containers[0].livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'health' } });
    expect(pod.containers[0].ports).toEqual([{ name: 'health', containerPort: 8090 }]);
    expect(pod.containers[0].securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    // The Deployment controller made one ReplicaSet and its pod from the template.
    const [replicaSet] = fake.list('apps', 'replicasets');
    expect(replicaSet.metadata.ownerReferences[0]).toMatchObject({ kind: 'Deployment', uid: deployment.metadata.uid });
    const pods = fake.podsOf('media', jobName(owner));
    expect(pods).toHaveLength(1);
    expect(pods[0].metadata.labels['pod-template-hash']).toBe(replicaSet.metadata.labels['pod-template-hash']);
    expect(pods[0].spec.containers[0].command).toEqual(pod.containers[0].command);
  });

  it("places a worker's pods by its overrides (the GPU pool for some workers only), the others by the defaults", async () => {
    const placed = new JobWorkloadDriver(fake.kubeConfig('operator'), {
      ...POD,
      overrides: {
        'camera-watcher': { nodeSelector: {}, tolerations: [], resources: {}, serviceAccountName: 'argus-camera' },
      },
    });
    await placed.ensure(owner, SPEC);
    const pod = fake.list('apps', 'deployments')[0].spec.template.spec;
    expect(pod.nodeSelector).toBeUndefined();
    expect(pod.tolerations).toBeUndefined();
    expect(pod.containers[0].resources).toBeUndefined();
    expect(pod.serviceAccountName).toBe('argus-camera');
    expect(pod.containers[0].envFrom).toEqual(POD.envFrom);
    const run = await store.create('CaptionRun', {
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'CaptionRun',
      metadata: { name: 'gpu-run', namespace: 'media' },
      spec: { rtspUrl: 'rtsp://cam/1', prompt: '', modelName: 'm', pipelineName: 'p', runName: 'r', maxTokens: 8 },
    });
    await placed.ensure(run, { mode: 'long-running', worker: 'caption-run', replicas: 1 });
    const gpu = fake.get('apps', 'deployments', 'media', jobName(run)).spec.template.spec;
    expect(gpu).toMatchObject({ nodeSelector: POD.nodeSelector, serviceAccountName: 'argus-worker' });
    expect(gpu.containers[0].resources).toEqual(POD.resources);
  });

  it("gives a worker's pods its own image, affinity, variables and volumes; an empty command runs the image's entrypoint", async () => {
    const secretKey = { name: 'ARGUS_API_KEYS_FILE', value: '/var/run/secrets/argus/api-keys/keys' };
    const fromSecret = { name: 'VLM_API_KEY', valueFrom: { secretKeyRef: { name: 'vlm', key: 'api-key' } } };
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['gpu'] }] }],
        },
      },
    };
    const placed = new JobWorkloadDriver(fake.kubeConfig('operator'), {
      ...POD,
      command: [],
      overrides: {
        'camera-watcher': {
          image: 'ghcr.io/argus/argus:1.0.0-cuda',
          affinity,
          env: [secretKey, fromSecret],
          volumes: [{ name: 'api-keys', secret: { secretName: 'keys', items: [{ key: 'k', path: 'keys' }] } }],
          volumeMounts: [{ name: 'api-keys', mountPath: '/var/run/secrets/argus/api-keys', readOnly: true }],
        },
      },
    });
    await placed.ensure(owner, SPEC);
    const pod = fake.list('apps', 'deployments')[0].spec.template.spec;
    const [container] = pod.containers;
    expect(container.image).toBe('ghcr.io/argus/argus:1.0.0-cuda');
    expect(container.command).toBeUndefined();
    expect(container.args).toEqual([
      'worker',
      'camera-watcher',
      '--resource',
      'media/front-door',
      '--health-port',
      '8090',
    ]);
    expect(pod.affinity).toEqual(affinity);
    expect(container.env).toEqual(expect.arrayContaining([secretKey, fromSecret]));
    expect(pod.volumes.map((v: { name: string }) => v.name)).toEqual(['tmp', 'data', 'api-keys']);
    expect(container.volumeMounts).toContainEqual({
      name: 'api-keys',
      mountPath: '/var/run/secrets/argus/api-keys',
      readOnly: true,
    });
  });

  it('inspects: none, waiting (FailedCreate from ReplicaFailure, image pull), available, restarts, progress deadline', async () => {
    expect(await driver.inspect(owner, 'long-running')).toBeUndefined();
    // No ServiceAccount in the namespace: admission refuses the pods, so none exists; the ReplicaSet's
    // ReplicaFailure condition shows on the Deployment.
    await driver.ensure(owner, SPEC);
    expect(fake.podsOf('media', jobName(owner))).toEqual([]);
    expect(await driver.inspect(owner, 'long-running')).toMatchObject({
      active: 0,
      ready: 0,
      restarts: 0,
      waiting: {
        reason: 'FailedCreate',
        message: expect.stringContaining('serviceaccount "argus-worker" not found'),
      },
    });
    const name = jobName(owner);
    const deployment = fake.get('apps', 'deployments', 'media', name);
    expect(deployment.status).toMatchObject({
      observedGeneration: 1,
      replicas: 0,
      availableReplicas: 0,
      conditions: expect.arrayContaining([
        expect.objectContaining({ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' }),
        expect.objectContaining({ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate' }),
      ]),
    });
    // The ServiceAccount appears: the ReplicaSet controller creates the pod; it waits for its image.
    fake.put('', 'serviceaccounts', { metadata: { name: 'argus-worker', namespace: 'media' } });
    expect(fake.podsOf('media', name)).toHaveLength(1);
    fake.imagePullFails('media', name, 'ImagePullBackOff', 'Back-off pulling image "ghcr.io/argus/argus:1.0.0"');
    expect(await driver.inspect(owner, 'long-running')).toMatchObject({
      active: 1,
      ready: 0,
      waiting: { reason: 'ImagePullBackOff' },
    });
    // The pod runs: available.
    fake.startPods('media', name);
    expect(fake.get('apps', 'deployments', 'media', name).status).toMatchObject({
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      conditions: expect.arrayContaining([
        expect.objectContaining({ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }),
        expect.objectContaining({ type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' }),
      ]),
    });
    const running = await driver.inspect(owner, 'long-running');
    expect(running).toMatchObject({ active: 1, ready: 1, restarts: 0, complete: false });
    expect(running?.waiting).toBeUndefined();
    // The worker crashes twice: the kubelet restarts it; the restarts and the last error show.
    fake.crashPods('media', name, 'mqtt broker unreachable');
    fake.crashPods('media', name, 'mqtt broker unreachable again');
    const crashing = await driver.inspect(owner, 'long-running');
    expect(crashing).toMatchObject({
      ready: 0, // the worker container waits in CrashLoopBackOff
      restarts: 2,
      lastError: 'Error (exit code 1): mqtt broker unreachable again',
    });
    expect(crashing?.waiting).toBeUndefined();
    expect(fake.get('apps', 'deployments', 'media', name).status.availableReplicas).toBe(0);
  });

  it('reports ProgressDeadlineExceeded when no pod becomes available before the deadline', async () => {
    await driver.ensure(owner, SPEC);
    fake.put('', 'serviceaccounts', { metadata: { name: 'argus-worker', namespace: 'media' } });
    const name = jobName(owner);
    fake.unschedulablePods('media', name, '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.');
    expect(await driver.inspect(owner, 'long-running')).toMatchObject({ waiting: { reason: 'Unschedulable' } });
    // A pod that is gone (evicted) leaves only the Deployment's condition to say why.
    fake.remove('', 'pods', 'media', fake.podsOf('media', name)[0].metadata.name);
    fake.unschedulablePods('media', name, '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.');
    fake.progressDeadlinePasses('media', name);
    const status = fake.get('apps', 'deployments', 'media', name).status;
    expect(status.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }),
      ]),
    );
  });

  it('tells listeners of Deployment and pod changes, removes the Deployment with its pods, and is collected with its owner', async () => {
    fake.put('', 'serviceaccounts', { metadata: { name: 'argus-worker', namespace: 'media' } });
    const seen: WorkloadOwner[] = [];
    let wake: () => void = () => {};
    const stop = driver.onChange((o) => {
      seen.push(o);
      wake();
    });
    try {
      await driver.ensure(owner, SPEC);
      const name = jobName(owner);
      const started = new Promise<void>((resolve) => (wake = () => seen.length > 0 && resolve()));
      fake.startPods('media', name);
      await started;
      expect(seen[0]).toEqual({ kind: 'CameraWatcher', namespace: 'media', name: 'front-door' });
      await driver.remove(owner, 'long-running');
      const deletion = fake.requests.find((r) => r.method === 'DELETE' && r.path.includes('/deployments/'))!;
      expect(deletion.query.propagationPolicy).toBe('Background');
      expect(fake.list('apps', 'deployments')).toEqual([]);
      expect(fake.list('apps', 'replicasets')).toEqual([]);
      expect(fake.list('', 'pods')).toEqual([]);
      await driver.remove(owner, 'long-running'); // none: no error
      await driver.ensure(owner, SPEC);
      await store.delete('CameraWatcher', 'media', 'front-door');
      expect(fake.list('apps', 'deployments')).toEqual([]);
      expect(fake.list('', 'pods')).toEqual([]);
    } finally {
      stop();
    }
  });
});

describe('deploymentStatus', () => {
  it('says ProgressDeadlineExceeded when no pod tells why and the Deployment stopped progressing', () => {
    const status = deploymentStatus(
      {
        metadata: { generation: 1 },
        status: {
          observedGeneration: 1,
          conditions: [
            {
              type: 'Progressing',
              status: 'False',
              reason: 'ProgressDeadlineExceeded',
              message: 'ReplicaSet "x" has timed out progressing.',
            },
          ],
        },
      },
      [],
    );
    expect(status).toMatchObject({
      active: 0,
      ready: 0,
      waiting: { reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "x" has timed out progressing.' },
    });
  });

  it('counts no replica available from a status of an older generation', () => {
    const status = deploymentStatus(
      { metadata: { generation: 2 }, status: { observedGeneration: 1, availableReplicas: 1, replicas: 1 } },
      [],
    );
    expect(status.ready).toBe(0);
  });
});
