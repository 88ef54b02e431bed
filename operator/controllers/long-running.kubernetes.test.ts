import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import client from 'prom-client';
import type { CameraWatcher, CaptionRun } from '../api/index.js';
import { JobWorkloadDriver, jobName, KubernetesResourceStore, OPERATOR_RULES } from '../drivers/kubernetes/index.js';
import type { WorkerPodTemplate } from '../drivers/kubernetes/job-manifest.js';
import { FakeApiServer } from '../drivers/kubernetes/testing/fake-api-server.js';
import { updateStatusWithRetry, updateWithRetry } from '../ports/index.js';
import { captureLogs } from '../../test/support/logs.js';
import { startControllers, type RunningControllers } from './index.js';
import type { ControllerSettings } from './settings.js';

const CONFIG: ControllerSettings = {
  ingest: { parallelism: 1, backoffLimit: 0, pendingDeadlineSeconds: 600 },
  retention: { count: 100, maxAgeSeconds: 86400 },
  captionRunRetention: { count: 100, maxAgeSeconds: 86400 },
  resyncSeconds: 3600,
};
const POD: WorkerPodTemplate = {
  image: 'ghcr.io/argus/argus:test',
  command: ['argus'],
  nodeSelector: {},
  tolerations: [],
  resources: {},
  envFrom: [],
  ttlSecondsAfterFinished: 3600,
};
const NS = 'media';

/**
 * The CameraWatcher and CaptionRun controllers with the kubernetes drivers against the fake API server, as the
 * operator's ServiceAccount; the test plays the kubelet (pods start, crash) and the workers (their status writes).
 */
describe('long-running controllers with the kubernetes drivers', () => {
  let fake: FakeApiServer;
  let admin: KubernetesResourceStore;
  let running: RunningControllers | undefined;
  let store: KubernetesResourceStore | undefined;
  let driver: JobWorkloadDriver | undefined;

  beforeEach(async () => {
    fake = await FakeApiServer.start({ admin: 'admin', operator: OPERATOR_RULES });
    admin = new KubernetesResourceStore(fake.kubeConfig('admin'));
  });
  afterEach(async () => {
    await stopOperator();
    await fake.close();
  });

  async function startOperator(config = CONFIG) {
    store = new KubernetesResourceStore(fake.kubeConfig('operator'));
    driver = new JobWorkloadDriver(fake.kubeConfig('operator'), POD);
    running = await startControllers({
      store,
      driver,
      config,
      logger: captureLogs({ level: 'error' }).logger,
      registry: new client.Registry(),
    });
  }

  async function stopOperator() {
    await running?.stop();
    running = undefined;
    store = undefined;
    driver = undefined;
  }

  /** Resolves with the operator's status write of the object once `done` holds for what it wrote. */
  const written = (plural: string, name: string, done: (status: any) => boolean) =>
    fake.waitForRequest(
      (r) =>
        r.user === 'operator' &&
        r.method === 'PUT' &&
        r.path === `/apis/argus.dev/v1alpha1/namespaces/${NS}/${plural}/${name}/status` &&
        r.status === 200 &&
        done(r.response.status),
    );
  const conditionOf = (status: any, type: string) => status.conditions?.find((c: any) => c.type === type);

  it('CameraWatcher: a Deployment per enabled watcher; Watching once its pod runs; the worker fields kept; disabled and deleted remove it; a restarted operator writes nothing new', async () => {
    await startOperator();
    const watcher: CameraWatcher = await admin.create('CameraWatcher', {
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'CameraWatcher',
      metadata: { name: 'front-door', namespace: NS },
      spec: { camera: 'front_door', enabled: true },
    });
    const name = jobName(watcher);
    const post = await fake.waitForRequest(
      (r) => r.user === 'operator' && r.method === 'POST' && r.path === `/apis/apps/v1/namespaces/${NS}/deployments`,
    );
    expect(post.status).toBe(201);
    expect(post.body.spec.replicas).toBe(1);
    expect(post.body.spec.template.spec.containers[0].command).toEqual([
      'argus',
      'worker',
      'camera-watcher',
      '--resource',
      `${NS}/front-door`,
      '--health-port',
      '8090',
    ]);
    await written('camerawatchers', 'front-door', (s) => s.phase === 'Pending');
    // The kubelet starts the pod; the worker (as the worker's account would) writes its fields.
    fake.startPods(NS, name);
    const watching = await written('camerawatchers', 'front-door', (s) => s.phase === 'Watching');
    expect(conditionOf(watching.response.status, 'Ready')).toMatchObject({ status: 'True', reason: 'Watching' });
    await updateStatusWithRetry(admin, 'CameraWatcher', NS, 'front-door', (latest) => ({
      ...latest.status,
      lastEventId: 'evt-1',
      lastEventStart: 1_700_000_000,
      eventsHandled: 1,
    }));
    // It crashes: restarts, Degraded while it waits to start again; the worker's fields stay.
    fake.crashPods(NS, name, 'recorder unreachable');
    const degraded = await written(
      'camerawatchers',
      'front-door',
      (s) => conditionOf(s, 'Degraded')?.status === 'True',
    );
    expect(degraded.response.status).toMatchObject({ phase: 'Pending', lastEventId: 'evt-1', eventsHandled: 1 });
    expect(conditionOf(degraded.response.status, 'Degraded')).toMatchObject({
      reason: 'WorkerRestarting',
      message: 'the worker ended 1 times; last: Error (exit code 1): recorder unreachable',
    });
    fake.startPods(NS, name);
    await written('camerawatchers', 'front-door', (s) => s.phase === 'Watching' && s.eventsHandled === 1);

    // A new operator (a restart, a new leader): the Deployment exists, the status says it all: nothing is written.
    await stopOperator();
    const before = fake.requests.length;
    const version = (await admin.get('CameraWatcher', NS, 'front-door'))!.metadata.resourceVersion;
    await startOperator();
    await admin.create('CameraWatcher', {
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'CameraWatcher',
      metadata: { name: 'marker', namespace: NS },
      spec: { camera: 'marker', enabled: false },
    });
    await written('camerawatchers', 'marker', (s) => s.phase === 'Stopped');
    const since = fake.requests.slice(before).filter((r) => r.user === 'operator' && r.method !== 'GET');
    expect(since.map((r) => `${r.method} ${r.path}`)).toEqual([
      `PUT /apis/argus.dev/v1alpha1/namespaces/${NS}/camerawatchers/marker/status`,
    ]);
    expect((await admin.get('CameraWatcher', NS, 'front-door'))!.metadata.resourceVersion).toBe(version);

    // Disabled: the Deployment goes (with its pods), the watcher is Stopped.
    await updateWithRetry(admin, 'CameraWatcher', NS, 'front-door', (w) => ({
      ...w,
      spec: { ...w.spec, enabled: false },
    }));
    const stopped = await written('camerawatchers', 'front-door', (s) => s.phase === 'Stopped');
    expect(stopped.response.status).toMatchObject({ lastEventId: 'evt-1', eventsHandled: 1, observedGeneration: 2 });
    expect(fake.list('apps', 'deployments')).toEqual([]);
    expect(fake.list('', 'pods')).toEqual([]);
    // Enabled again, then deleted: the garbage collector takes the Deployment with it.
    await updateWithRetry(admin, 'CameraWatcher', NS, 'front-door', (w) => ({
      ...w,
      spec: { ...w.spec, enabled: true },
    }));
    // (The operator's Deployment cache may still hold the deleted one for a moment: it makes the new one once its
    // watch has seen the deletion.)
    await fake.waitForRequest(
      (r) =>
        r.user === 'operator' &&
        r.method === 'POST' &&
        r.path.endsWith('/deployments') &&
        r.status === 201 &&
        fake.requests.indexOf(r) >
          fake.requests.findIndex((d) => d.method === 'DELETE' && d.path.includes('/deployments/')),
    );
    await written('camerawatchers', 'front-door', (s) => s.phase === 'Pending' && s.observedGeneration === 3);
    expect(fake.list('apps', 'deployments')).toHaveLength(1);
    await admin.delete('CameraWatcher', NS, 'front-door');
    expect(fake.list('apps', 'deployments')).toEqual([]);
    expect(fake.requests.filter((r) => r.status === 403)).toEqual([]);
  });

  it('CaptionRun: Starting until the worker runs, the worker phase while it runs, Stopped on request (Deployment deleted), retention deletes it', async () => {
    await startOperator({ ...CONFIG, captionRunRetention: { count: 0, maxAgeSeconds: 86400 } });
    const run: CaptionRun = await admin.create('CaptionRun', {
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'CaptionRun',
      metadata: { name: 'front', namespace: NS },
      spec: {
        rtspUrl: 'rtsp://127.0.0.1:8554/front',
        prompt: 'Describe',
        modelName: 'offline',
        pipelineName: 'default',
        runName: 'front',
        maxTokens: 64,
      },
    });
    const name = jobName(run);
    await written('captionruns', 'front', (s) => s.phase === 'Starting');
    fake.imagePullFails(NS, name, 'ImagePullBackOff', 'Back-off pulling image "ghcr.io/argus/argus:test"');
    const waiting = await written(
      'captionruns',
      'front',
      (s) => conditionOf(s, 'Progressing')?.reason === 'ImagePullBackOff',
    );
    expect(waiting.response.status.message).toMatch(/^waiting for the caption worker \(ImagePullBackOff\)/);
    fake.startPods(NS, name);
    // The worker reports its phase and counters.
    await updateStatusWithRetry(admin, 'CaptionRun', NS, 'front', (latest) => ({
      ...latest.status,
      phase: 'Running',
      message: 'captioning',
      framesProcessed: 30,
    }));
    const runningRun = await written('captionruns', 'front', (s) => conditionOf(s, 'Ready')?.status === 'True');
    expect(runningRun.response.status).toMatchObject({ phase: 'Running', framesProcessed: 30 });
    await updateStatusWithRetry(admin, 'CaptionRun', NS, 'front', (latest) => ({
      ...latest.status,
      phase: 'Reconnecting',
      message: 'stream lost (EOF); reconnecting',
    }));
    const reconnecting = await written(
      'captionruns',
      'front',
      (s) => conditionOf(s, 'Degraded')?.reason === 'Reconnecting',
    );
    expect(conditionOf(reconnecting.response.status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Reconnecting',
    });
    // DELETE in caption-runs: stopRequested. The Deployment goes; the run ends Stopped, and retention 0 deletes it.
    await updateWithRetry(admin, 'CaptionRun', NS, 'front', (r) => ({
      ...r,
      spec: { ...r.spec, stopRequested: true },
    }));
    const stopped = await written('captionruns', 'front', (s) => s.phase === 'Stopped');
    expect(stopped.response.status).toMatchObject({ message: 'stopped on request', framesProcessed: 30 });
    expect(stopped.response.status.finishedTime).toEqual(expect.any(String));
    await fake.waitForRequest(
      (r) =>
        r.user === 'operator' &&
        r.method === 'DELETE' &&
        r.path === `/apis/argus.dev/v1alpha1/namespaces/${NS}/captionruns/front`,
    );
    expect(fake.list('apps', 'deployments')).toEqual([]);
    expect(fake.requests.filter((r) => r.status === 403)).toEqual([]);
  });

  it('CaptionRun: no worker can start before the progress deadline: Failed, Deployment removed', async () => {
    await startOperator();
    const run: CaptionRun = await admin.create('CaptionRun', {
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'CaptionRun',
      metadata: { name: 'gpu', namespace: NS },
      spec: {
        rtspUrl: 'rtsp://127.0.0.1:8554/gpu',
        prompt: 'Describe',
        modelName: 'vlm',
        pipelineName: 'default',
        runName: 'gpu',
        maxTokens: 64,
      },
    });
    const name = jobName(run);
    await written('captionruns', 'gpu', (s) => s.phase === 'Starting');
    fake.remove('', 'serviceaccounts', NS, 'default');
    fake.progressDeadlinePasses(NS, name);
    const failed = await written('captionruns', 'gpu', (s) => s.phase === 'Failed');
    expect(failed.response.status.message).toMatch(
      /^no caption worker could start: ReplicaSet ".*" has timed out progressing\./,
    );
    expect(conditionOf(failed.response.status, 'Degraded')).toMatchObject({ status: 'True', reason: 'Failed' });
    expect(fake.list('apps', 'deployments')).toEqual([]);
  });
});
