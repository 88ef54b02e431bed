/**
 * The chart's RBAC against the code: the operator, the workers (ingest, camera-watcher, caption-run), dataprep,
 * camera-rules and caption-runs run
 * against the fake API server as the chart's ServiceAccounts, under exactly the bindings the chart renders (RBAC by
 * namespace, resourceNames). A request the code makes that the chart does not grant is refused (403) and fails the
 * test; a granted rule that no request used fails it too.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { SERVICES, type StartedService } from '../bin/services.js';
import { loadControllerSettings } from '../operator/config.js';
import { itemWorker } from '../operator/controllers/ingestjob/testing/item-worker.js';
import { KubernetesResourceStore } from '../operator/drivers/kubernetes/index.js';
import { FakeApiServer } from '../operator/drivers/kubernetes/testing/fake-api-server.js';
import { serviceAccountIdentities, unusedGrants } from '../operator/drivers/kubernetes/testing/fake-rbac.js';
import { startOperator, type StartedOperator } from '../operator/main.js';
import { updateWithRetry } from '../operator/ports/index.js';
import { newIngestJob } from '../operator/ports/resource-store.contract.js';
import { openServiceControlPlane } from '../operator/service-control-plane.js';
import { runWorker } from '../operator/worker-command.js';
import { IngestJobs } from '../services/dataprep/jobs/ingest-jobs.js';
import type { PlatformConfig } from '../services/lib/config/index.js';
import { FakeFrigate } from '../services/camera-rules/testing/fake-frigate.js';
import { RuleBook } from '../services/camera-rules/rules/rule-book.js';
import { startCameraWatcherWorker } from '../services/camera-rules/watcher/start-camera-watcher.js';
import { startCaptionWorker } from '../services/caption-runs/worker/start-caption-worker.js';
import { loadClusterOperatorConfig } from '../operator/config.js';
import type { WorkerStarter } from '../operator/worker-command.js';
import { captureLogs } from '../test/support/logs.js';
import { startTestBroker, type TestBroker } from '../test/support/mqtt-broker.js';
import { podEnv, renderChart, type Manifest } from './helm-template.js';

const OPERATOR = 'system:serviceaccount:argus:rel-argus-operator';
const DATAPREP = 'system:serviceaccount:argus:rel-argus-dataprep';
const account = (service: string) => `system:serviceaccount:argus:rel-argus-${service}`;
const worker = (namespace: string) => `system:serviceaccount:${namespace}:rel-argus-ingest-worker`;

describe("the chart's RBAC is what the code needs, no more, no less", () => {
  let fake: FakeApiServer;
  let dir: string;
  let operator: StartedOperator | undefined;
  let services: StartedService[] = [];
  let stub: http.Server | undefined;
  let frigate: FakeFrigate | undefined;
  let broker: TestBroker | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'argus-chart-rbac-'));
  });
  afterEach(async () => {
    for (const service of services) await service.close();
    services = [];
    if (stub) await new Promise((resolve) => stub!.close(resolve));
    stub = undefined;
    await frigate?.close();
    frigate = undefined;
    await broker?.close();
    broker = undefined;
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
        ARGUS_CAPTION_RUN_RETENTION_COUNT: '0',
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
    // One conflict on the operator's first status write of each kind: it re-reads the object live, as after any
    // conflict.
    const conflicted = new Set<string>();
    fake.intercept((r) => {
      if (r.user !== OPERATOR || r.method !== 'PUT' || !r.path.endsWith('/status')) return undefined;
      const plural = r.path.split('/').at(-3)!;
      if (conflicted.has(plural)) return undefined;
      conflicted.add(plural);
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
    // The same for the Deployments of long-running workloads.
    let deploymentRead!: () => void;
    const deploymentReadSeen = new Promise<undefined>((resolve) => (deploymentRead = () => resolve(undefined)));
    fake.intercept((r) =>
      r.user === OPERATOR && r.query.watch === 'true' && r.path.endsWith('/deployments')
        ? deploymentReadSeen
        : undefined,
    );
    void fake
      .waitForRequest((r) => r.user === OPERATOR && r.method === 'GET' && /\/deployments\/[^/]+$/.test(r.path))
      .then(deploymentRead);
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
    // A camera watcher enabled, then disabled (its Deployment made, then deleted); a caption run started, then
    // stopped (its Deployment deleted) and deleted at once (caption run retention 0).
    const admin = new KubernetesResourceStore(fake.kubeConfig('admin'));
    const deploymentCall = (method: string, name: string) =>
      fake.waitForRequest(
        (r) =>
          r.user === OPERATOR &&
          r.method === method &&
          r.path.startsWith(`/apis/apps/v1/namespaces/${servicesNamespace}/deployments`) &&
          (method === 'POST' || r.path.endsWith(`/${name}`)),
      );
    await admin.create('CameraWatcher', {
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'CameraWatcher',
      metadata: { name: 'front', namespace: servicesNamespace },
      spec: { camera: 'front', enabled: true },
    });
    await deploymentCall('POST', 'camerawatcher-front');
    await updateWithRetry(admin, 'CameraWatcher', servicesNamespace, 'front', (w) => ({
      ...w,
      spec: { ...w.spec, enabled: false },
    }));
    await deploymentCall('DELETE', 'camerawatcher-front');
    await admin.create('CaptionRun', {
      apiVersion: 'argus.dev/v1alpha1',
      kind: 'CaptionRun',
      metadata: { name: 'front-run', namespace: servicesNamespace },
      spec: {
        rtspUrl: 'rtsp://127.0.0.1:8554/front',
        prompt: '',
        modelName: 'm',
        pipelineName: 'p',
        runName: 'r',
        maxTokens: 8,
      },
    });
    await fake.waitForRequest(
      (r) =>
        r.user === OPERATOR &&
        r.method === 'PUT' &&
        r.path.endsWith('/captionruns/front-run/status') &&
        r.status === 200,
    );
    await updateWithRetry(admin, 'CaptionRun', servicesNamespace, 'front-run', (run) => ({
      ...run,
      spec: { ...run.spec, stopRequested: true },
    }));
    await deploymentCall('DELETE', 'captionrun-front-run');
    await fake.waitForRequest(
      (r) =>
        r.user === OPERATOR &&
        r.method === 'DELETE' &&
        r.path === `/apis/argus.dev/v1alpha1/namespaces/${servicesNamespace}/captionruns/front-run`,
    );
    jobRead();
    deploymentRead();
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

  /**
   * One service as `argus serve <service>` runs it in its pod: its settings from the rendered pod environment
   * (ARGUS_CONTROL_PLANE=kubernetes, ARGUS_NAMESPACE), the control plane `argus serve` opens, with the KUBECONFIG of
   * the service's chart account; on 127.0.0.1 and a free port here.
   */
  async function serveAsChartAccount(manifests: Manifest[], service: string, namespace: string, env = {}) {
    const entry = await SERVICES[service]();
    // The chart's host and port variables (the pod IP, the container port) become 127.0.0.1 and a free port.
    const container = manifests.find((m) => m.kind === 'Deployment' && m.metadata.name === `rel-argus-${service}`)?.spec
      .template.spec.containers[0];
    const listening = (container.env as { name: string; value?: string }[])
      .filter((e) => e.value === '0.0.0.0' || e.value === String(container.ports[0].containerPort))
      .map((e) => [e.name, e.value === '0.0.0.0' ? '127.0.0.1' : '0']);
    expect(listening).toHaveLength(2);
    const vars = {
      ...podEnv(manifests, service, namespace),
      ...env,
      ...Object.fromEntries(listening),
      ARGUS_DATA_DIR: path.join(dir, service, 'data'),
      ARGUS_MODELS_DIR: path.join(dir, service, 'models'),
    };
    const config = entry.loadConfig(vars) as { platform: PlatformConfig };
    expect(config.platform).toMatchObject({ controlPlane: 'kubernetes', namespace });
    // The control plane reads KUBECONFIG as client-node does, from the process environment, once.
    const before = process.env.KUBECONFIG;
    process.env.KUBECONFIG = await kubeconfig(account(service));
    const { logger } = captureLogs();
    let plane;
    try {
      plane = await openServiceControlPlane({
        mode: 'kubernetes',
        namespace: config.platform.namespace,
        dataDir: config.platform.dataDir,
        logger,
        config: loadControllerSettings({}),
      });
    } finally {
      if (before === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = before;
    }
    const started = await entry.start(config, { env: vars, logger, controlPlane: plane.controlPlane });
    services.push(started);
    return async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${started.url}${route}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      expect({ method, route, status: response.status, text }).toMatchObject({ status: 200 });
      return JSON.parse(text);
    };
  }

  it.each([
    ['every namespace', [] as string[], 'argus'],
    ['watchNamespace team-a', ['watchNamespace=team-a'], 'team-a'],
  ])(
    'camera-rules and caption-runs call only what their chart accounts grant, and use all of it (%s)',
    async (_mode, set, namespace) => {
      const manifests = await renderChart(...set);
      const identities = serviceAccountIdentities(manifests);
      fake = await FakeApiServer.start({ admin: 'admin', ...identities });
      // dataprep's health, which camera-rules checks before it changes a watcher.
      stub = http.createServer((req, res) => {
        res.writeHead(req.url === '/v1/dataprep/health' ? 200 : 404, { 'content-type': 'application/json' });
        res.end('{"status":"healthy"}');
      });
      await new Promise<void>((resolve) => stub!.listen(0, '127.0.0.1', resolve));
      const stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;

      // camera-rules: rules (create, list, get, delete) and watchers (create, then update; the mapping lists them).
      const cameraRules = await serveAsChartAccount(manifests, 'camera-rules', namespace, {
        CAMERA_RULES_DATAPREP_URL: `${stubUrl}/v1/dataprep`,
        CAMERA_RULES_ALERT_DISPATCH_URL: `${stubUrl}/api/v1`,
      });
      await cameraRules('POST', '/rules/', { id: 'people', label: 'person', action: 'alert', camera: 'front' });
      expect((await cameraRules('GET', '/rules/')).map((r: { id: string }) => r.id)).toEqual(['people']);
      expect(await cameraRules('GET', '/rules/people')).toMatchObject({ id: 'people', count: 0 });
      await cameraRules('DELETE', '/rules/people');
      await cameraRules('POST', '/watchers/enable', { cameras: [{ front: true }] });
      await cameraRules('POST', '/watchers/enable', { cameras: [{ front: false }] });
      expect(await cameraRules('GET', '/watchers/mapping')).toEqual({ mapping: { front: false } });

      // caption-runs: a run started (list for duplicates, create), listed, read, stopped (get, update). In the
      // cluster it needs MQTT_BROKER (services.caption-runs.env), where its workers publish.
      broker = await startTestBroker();
      const captionRuns = await serveAsChartAccount(manifests, 'caption-runs', namespace, {
        VLM_BASE_URL: `${stubUrl}/v1`,
        MQTT_BROKER: broker.url,
      });
      const run = await captionRuns('POST', '/api/generate_captions_alerts', {
        rtspUrl: 'rtsp://127.0.0.1:8554/front',
        runName: 'front door',
      });
      expect(run.runId).toBe('front_door');
      expect(
        (await captionRuns('GET', '/api/generate_captions_alerts')).map((r: { runId: string }) => r.runId),
      ).toEqual(['front_door']);
      expect(await captionRuns('GET', '/api/generate_captions_alerts/front_door')).toMatchObject({
        runId: 'front_door',
      });
      await captionRuns('DELETE', '/api/generate_captions_alerts/front_door');
      const runs = await new KubernetesResourceStore(fake.kubeConfig('admin')).list('CaptionRun', namespace);
      expect(runs.map((r) => [r.spec.runId, r.spec.stopRequested])).toEqual([['front_door', true]]);

      const users = ['camera-rules', 'caption-runs'].map(account);
      expect(users.every((user) => user in identities)).toBe(true);
      // Everything they did happened in the namespace the chart gave them.
      for (const user of users)
        expect(
          fake.requests.filter((r) => r.user === user && !r.path.match(new RegExp(`/namespaces/${namespace}(/|$)`))),
        ).toEqual([]);
      expect(fake.requests.filter((r) => r.status === 403).map((r) => `${r.user} ${r.method} ${r.path}`)).toEqual([]);
      for (const user of users)
        expect({ user, unused: unusedGrants(identities[user], user, fake.requests) }).toEqual({ user, unused: [] });
    },
  );

  /** What `argus worker` runs for the long-running workers (bin/argus.ts's starters). */
  const LONG_RUNNING_STARTERS: Record<string, WorkerStarter> = {
    'camera-watcher': (env, resources, log) => startCameraWatcherWorker(env as NodeJS.ProcessEnv, resources, log),
    'caption-run': (env, resources, log) => startCaptionWorker(env as NodeJS.ProcessEnv, resources, log),
  };

  it.each([
    ['every namespace, team-a opted in', ['worker.namespaces={team-a}'], ['argus', 'team-a']],
    ['watchNamespace team-a', ['watchNamespace=team-a'], ['team-a']],
  ])(
    'the camera-watcher and caption-run workers call only what their chart accounts grant, and use all of it (%s)',
    async (_mode, set, namespaces) => {
      broker = await startTestBroker();
      frigate = new FakeFrigate({ front: {} });
      await frigate.start();
      // The workers' settings are the chart's: their services' env, copied into each worker namespace.
      const manifests = await renderChart(
        ...set,
        `services.camera-rules.env.CAMERA_RULES_FRIGATE_URL=${frigate.url}`,
        `services.caption-runs.env.MQTT_BROKER=${broker.url}`,
      );
      const identities = serviceAccountIdentities(manifests);
      fake = await FakeApiServer.start({ admin: 'admin', ...identities });
      const admin = new KubernetesResourceStore(fake.kubeConfig('admin'));
      // Which account and settings each worker's pods get: the operator's own reading of its rendered environment.
      const deployment = manifests.find((m) => m.kind === 'Deployment' && m.metadata.name === 'rel-argus-operator');
      const operatorEnv: Record<string, string> = { ARGUS_POD_NAME: 'op' };
      for (const e of deployment?.spec.template.spec.containers[0].env ?? [])
        if (e.value !== undefined) operatorEnv[e.name] = e.value;
      const overrides = loadClusterOperatorConfig(operatorEnv).kubernetes.worker.overrides ?? {};
      const users: string[] = [];

      /** `argus worker <name> --resource <ns>/<name>` in a pod of that namespace, as the chart's worker account. */
      const runPod = async (worker: string, namespace: string, name: string, signal: AbortSignal) => {
        const override = overrides[worker];
        const user = `system:serviceaccount:${namespace}:${override.serviceAccountName}`;
        users.push(user);
        const env: Record<string, string> = {};
        for (const source of override.envFrom ?? []) {
          if (!('configMapRef' in source)) continue;
          const configMap = manifests.find(
            (m) =>
              m.kind === 'ConfigMap' &&
              m.metadata.name === source.configMapRef.name &&
              m.metadata.namespace === namespace,
          );
          expect(configMap).toBeDefined();
          Object.assign(env, configMap!.data);
        }
        return runWorker(
          [worker, '--resource', `${namespace}/${name}`],
          {
            ...env,
            // The pod template's variables (job-manifest.ts), and the pod's namespace (its ServiceAccount's file).
            ARGUS_DATA_DIR: path.join(dir, worker, namespace, 'data'),
            ARGUS_MODELS_DIR: path.join(dir, worker, namespace, 'models'),
            ARGUS_NAMESPACE: namespace,
            KUBECONFIG: await kubeconfig(user),
          },
          captureLogs().logger,
          LONG_RUNNING_STARTERS,
          signal,
        ).then(() => user);
      };

      for (const namespace of namespaces) {
        // camera-watcher: reads its CameraWatcher, lists and watches the rules, claims the ended event on the matching rule and
        // records the result (CameraRule status), then records the event in its CameraWatcher's status. A camera per
        // namespace: the recorder is shared, and a watcher follows every event of its camera after it was created.
        const camera = `front-${namespace}`;
        await new RuleBook(admin, namespace, captureLogs().logger).add({
          id: 'people',
          label: 'person',
          action: 'summarize',
          camera,
          source: null,
          event_type: 'end',
        });
        await admin.create('CameraWatcher', {
          apiVersion: 'argus.dev/v1alpha1',
          kind: 'CameraWatcher',
          metadata: { name: camera, namespace },
          spec: { camera, enabled: true },
        });
        const start = Math.ceil(Date.now() / 1000) + 2;
        frigate.addEvent({ id: `${namespace}-1`, camera, start_time: start, end_time: start + 1 });
        const stop = new AbortController();
        const watcherUser = `system:serviceaccount:${namespace}:rel-argus-camera-watcher-worker`;
        // Rules are read from the worker's rule cache (list, then watch); a claim that meets a conflict (another
        // replica's write in between) reads the rule live before it writes again: the first one does here.
        let conflicted = false;
        const stopConflict = fake.intercept((r) => {
          if (
            conflicted ||
            r.user !== watcherUser ||
            r.method !== 'PUT' ||
            !/\/camerarules\/[^/]+\/status$/.test(r.path)
          )
            return undefined;
          conflicted = true;
          return {
            status: 409,
            body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409 },
          };
        });
        const watcher = runPod('camera-watcher', namespace, camera, stop.signal);
        // Until it recorded the event, or was refused (the 403 check below names the request).
        await Promise.race([
          fake.waitForRequest(
            (r) =>
              r.user === watcherUser &&
              r.method === 'PUT' &&
              r.path.endsWith(`/namespaces/${namespace}/camerawatchers/${camera}/status`) &&
              r.status === 200,
          ),
          fake.waitForRequest((r) => r.user === watcherUser && r.status === 403),
        ]);
        stop.abort();
        await watcher;
        stopConflict();
        expect(conflicted).toBe(true);
        expect(fake.requests.filter((r) => r.status === 403).map((r) => `${r.user} ${r.method} ${r.path}`)).toEqual([]);
        const rule = await admin.get(
          'CameraRule',
          namespace,
          (await admin.list('CameraRule', namespace))[0].metadata.name,
        );
        expect(rule?.status?.count).toBe(1);
        expect((await admin.get('CameraWatcher', namespace, camera))?.status).toMatchObject({
          lastEventId: `${namespace}-1`,
          eventsHandled: 1,
        });

        // caption-run: reads its CaptionRun and writes its phase (Starting, then Failed: no VLM is configured).
        await admin.create('CaptionRun', {
          apiVersion: 'argus.dev/v1alpha1',
          kind: 'CaptionRun',
          metadata: { name: 'front-run', namespace },
          spec: {
            rtspUrl: 'rtsp://127.0.0.1:8554/front',
            prompt: '',
            modelName: 'm',
            pipelineName: 'p',
            runName: 'r',
            maxTokens: 8,
          },
        });
        await runPod('caption-run', namespace, 'front-run', new AbortController().signal);
        expect((await admin.get('CaptionRun', namespace, 'front-run'))?.status).toMatchObject({ phase: 'Failed' });
      }

      expect(users.every((user) => user in identities)).toBe(true);
      expect(users).toHaveLength(2 * namespaces.length);
      expect(fake.requests.filter((r) => r.status === 403).map((r) => `${r.user} ${r.method} ${r.path}`)).toEqual([]);
      for (const user of users)
        expect({ user, unused: unusedGrants(identities[user], user, fake.requests) }).toEqual({ user, unused: [] });
    },
  );
});
