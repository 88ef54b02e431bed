/**
 * The chart rendered over a matrix of values (defaults, GPU pool, external backends, CRDs off, ingress with API keys
 * and with an authenticating proxy, watchNamespace, every option on), every object — and every worker pod the
 * operator would make from the rendered settings — checked against the Kubernetes API schema (unknown fields
 * included) and on what matters: probes, PodSecurity "restricted", Secrets referenced and never inlined, GPU
 * placement only on GPU workloads, RBAC equal to the rules the code exports, the image's models never hidden. Then
 * the backends, refusals, API keys, NOTES, `helm test`, ServiceMonitor, NetworkPolicy, PDB and HPA one by one.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import type { V1Container, V1PodSpec } from '@kubernetes/client-node';
import { SERVICES } from '../bin/services.js';
import type { AnyResource } from '../operator/api/index.js';
import { loadClusterOperatorConfig } from '../operator/config.js';
import { buildDeployment, buildJob } from '../operator/drivers/kubernetes/job-manifest.js';
import { leaderElectionRules } from '../operator/drivers/kubernetes/rbac.js';
import { loadAlertDispatchConfig } from '../services/alert-dispatch/config.js';
import { loadCameraRulesConfig } from '../services/camera-rules/config.js';
import { loadCaptionQaConfig } from '../services/caption-qa/config.js';
import { loadCaptionRunsConfig } from '../services/caption-runs/config.js';
import { CredentialSealer } from '../services/caption-runs/runs/stream-credentials.js';
import { loadDataprepConfig } from '../services/dataprep/config.js';
import { loadFrameAnalysisConfig } from '../services/frame-analysis/config.js';
import { platformEnvSchema } from '../services/lib/config/index.js';
import {
  type EnvVar,
  type Manifest,
  podEnv,
  renderChart,
  renderChartWith,
  renderNotes,
  secretValue,
} from './helm-template.js';
import { apiSchemaProblems } from './k8s-schema.js';
import { exportedRuleSets } from './rbac-rule-files.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);
const SERVICE_NAMES = Object.keys(SERVICES).sort();
/** Whether the platform settings read an API keys file (the services' side of auth.apiKeys). */
const KEYS_FILE_KNOWN = 'ARGUS_API_KEYS_FILE' in platformEnvSchema;
const KEYS = 'auth.apiKeys.existingSecret=argus-api-keys';
const GPU = ['services.frame-analysis.gpu=true', 'worker.gpu=true', 'workers.captionRun.gpu=true'];
/** Every backend outside the chart, credentials in Secrets, and replicas that need them. */
const EXTERNAL = [
  'backends.s3.endpoint=http://minio.storage:9000',
  'backends.s3.existingSecret=s3-creds',
  'backends.weaviate.url=http://weaviate.vectors:8080',
  'backends.weaviate.grpcUrl=http://weaviate-grpc.vectors:50051',
  'backends.weaviate.existingSecret=weaviate-key',
  'backends.mqtt.url=mqtt://mosquitto.mqtt:1883',
  'backends.redis.url=redis://redis.cache:6379/0',
  'backends.llm.baseUrl=http://vllm.llm:8000/v1',
  'backends.llm.model=qwen2.5-7b-instruct',
  'backends.llm.existingSecret=llm-key',
  'backends.vlm.baseUrl=http://vllm-vl.llm:8000/v1',
  'backends.vlm.model=qwen2.5-vl-7b-instruct',
  'backends.vlm.existingSecret=vlm-key',
  'services.dataprep.replicas=2',
  'services.caption-qa.replicas=3',
  'services.alert-dispatch.autoscaling.enabled=true',
  'services.frame-analysis.autoscaling.enabled=true',
];
/** camera-rules on Frigate's authenticated port, its user from a Secret, a lease of its own, two replicas. */
const FRIGATE = [
  'services.camera-rules.frigate.url=https://frigate.nvr:8971',
  'services.camera-rules.frigate.existingSecret=frigate-user',
  'services.camera-rules.claimLeaseSeconds=120',
  'services.camera-rules.replicas=2',
];
/** caption-runs with the key that seals stream passwords from a Secret, and two replicas sharing their claims in Redis. */
const CAPTION_RUNS = [
  'services.caption-runs.credentials.existingSecret=caption-runs-credentials',
  'services.caption-runs.replicas=2',
  'backends.redis.url=redis://redis.cache:6379/0',
];
/** caption-runs reading demo files (rtspUrl a path below CAPTION_RUNS_MEDIA_ROOT) from a folder of a claim. */
const MEDIA = ['services.caption-runs.media.claimName=demo-media', 'services.caption-runs.media.subPath=clips'];
/** camera-rules on Frigate's recordings (its media claim, read-only) with the analyses on another claim. */
const DIRECTORY = [
  'services.camera-rules.directory.recordings.claimName=frigate-media',
  'services.camera-rules.directory.recordings.subPath=recordings',
  'services.camera-rules.directory.detections.claimName=argus-detections',
  'services.camera-rules.directory.detections.subPath=',
];
const MATRIX: Array<[string, string[]]> = [
  ['defaults', []],
  ['camera-rules on Frigate with a user', FRIGATE],
  ['camera-rules on a recordings directory', DIRECTORY],
  ['caption-runs with a credentials key and replicas', CAPTION_RUNS],
  ['caption-runs reading files from a media claim', MEDIA],
  ['GPU pool', GPU],
  ['external backends', EXTERNAL],
  ['CRDs off', ['crds.enabled=false']],
  ['ingress with API keys', ['ingress.enabled=true', KEYS]],
  [
    'ingress behind an authenticating proxy',
    ['ingress.enabled=true', 'ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/auth-url=http://oauth2-proxy/auth'],
  ],
  ['watchNamespace', ['watchNamespace=team-a', KEYS]],
  [
    'every option on',
    [
      ...GPU,
      KEYS,
      CAPTION_RUNS[0],
      MEDIA[0],
      'worker.namespaces={team-a}',
      'backends.redis.deploy.enabled=true',
      'networkPolicy.enabled=true',
      'volumes.extraModels.persistentVolumeClaim.claimName=models',
      'services.camera-rules.replicas=2',
      'services.caption-runs.autoscaling.enabled=true',
    ],
  ],
];

const find = (manifests: Manifest[], kind: string, name: string) =>
  manifests.find((m) => m.kind === kind && m.metadata.name === name);
const deployment = (manifests: Manifest[], name: string) => find(manifests, 'Deployment', `rel-argus-${name}`);
const podOf = (manifest: Manifest | undefined): V1PodSpec => manifest?.spec.template?.spec ?? manifest?.spec;
const containerOf = (manifest: Manifest | undefined): V1Container => podOf(manifest).containers[0];
const envOf = (manifest: Manifest | undefined) => (containerOf(manifest).env ?? []) as EnvVar[];

/**
 * The worker pods the operator makes from the rendered settings (loadClusterOperatorConfig, as `argus operator`
 * reads them): an ingest Job, a camera-watcher and a caption-run Deployment, in the release namespace.
 */
function workerWorkloads(manifests: Manifest[]): Record<string, Manifest> {
  const vars: Record<string, string> = { ARGUS_POD_NAME: 'op' };
  for (const e of envOf(deployment(manifests, 'operator'))) if (e.value !== undefined) vars[e.name] = e.value;
  const { worker } = loadClusterOperatorConfig(vars).kubernetes;
  const owner = (kind: string) =>
    ({
      apiVersion: 'argus.dev/v1alpha1',
      kind,
      metadata: { name: 'front', namespace: 'argus', uid: 'u1' },
      spec: {},
    }) as unknown as AnyResource;
  const job = { worker: 'ingest', completions: 2, parallelism: 2, backoffLimit: 3 };
  return {
    ingest: buildJob(owner('IngestJob'), job, worker) as unknown as Manifest,
    'camera-watcher': buildDeployment(
      owner('CameraWatcher'),
      { mode: 'long-running', worker: 'camera-watcher', replicas: 1 },
      worker,
    ) as unknown as Manifest,
    'caption-run': buildDeployment(
      owner('CaptionRun'),
      { mode: 'long-running', worker: 'caption-run', replicas: 1 },
      worker,
    ) as unknown as Manifest,
  };
}

/** Every pod the chart runs or makes run: its Deployments, the test pod, the operator's worker pods. */
function allPods(manifests: Manifest[]): Array<[string, Manifest]> {
  const rendered = manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'Pod');
  return [
    ...rendered.map((m) => [`${m.kind}/${m.metadata.name}`, m] as [string, Manifest]),
    ...Object.entries(workerWorkloads(manifests)).map(([w, m]) => [`worker ${w}`, m] as [string, Manifest]),
  ];
}

/** What PodSecurity "restricted" (and the chart's read-only root) would refuse in a pod: empty when it passes. */
function restrictedProblems(pod: V1PodSpec): string[] {
  const problems: string[] = [];
  const podContext = pod.securityContext ?? {};
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) problems.push('host namespaces');
  if (!['RuntimeDefault', 'Localhost'].includes(podContext.seccompProfile?.type ?? '')) problems.push('seccomp');
  for (const volume of pod.volumes ?? [])
    if (!['emptyDir', 'configMap', 'secret', 'persistentVolumeClaim', 'projected'].some((k) => k in volume))
      problems.push(`volume ${volume.name}`);
  for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
    const sc = c.securityContext ?? {};
    if (!(sc.runAsNonRoot ?? podContext.runAsNonRoot)) problems.push(`${c.name}: runAsNonRoot`);
    if ((sc.runAsUser ?? podContext.runAsUser) === 0) problems.push(`${c.name}: runs as root`);
    if (sc.allowPrivilegeEscalation !== false) problems.push(`${c.name}: allowPrivilegeEscalation`);
    if (sc.privileged) problems.push(`${c.name}: privileged`);
    if (!sc.capabilities?.drop?.includes('ALL')) problems.push(`${c.name}: capabilities not dropped`);
    if ((sc.capabilities?.add ?? []).some((cap) => cap !== 'NET_BIND_SERVICE')) problems.push(`${c.name}: adds caps`);
    if (sc.readOnlyRootFilesystem !== true) problems.push(`${c.name}: writable root filesystem`);
    if (c.ports?.some((p) => p.hostPort)) problems.push(`${c.name}: hostPort`);
  }
  return problems;
}

/** Whether a pod runs a service or a worker (not the operator, the small backends or the test pod). */
const argusCode = (name: string, pod: Manifest) => name.startsWith('worker ') || containerOf(pod).args?.[0] === 'serve';

/** Names of variables that hold secrets, as the chart's refusal (argus.validate) recognises them. */
const SECRET_NAME = /(API_KEY|SECRET|TOKEN|PASSWORD|ACCESS_KEY|CREDENTIALS)(?!.*_FILE$)/;

describe.each(MATRIX)('the chart rendered with %s', (_name, set) => {
  let manifests: Manifest[];
  const rendered = async () => (manifests ??= await renderChart(...set));

  it('is valid for the Kubernetes API: types, required fields, no unknown field (the worker pods too)', async () => {
    const all = await rendered();
    expect(await apiSchemaProblems(all)).toEqual([]);
    expect(await apiSchemaProblems(Object.values(workerWorkloads(all)))).toEqual([]);
  });

  it('passes PodSecurity "restricted" in every pod, the operator\'s workers and the small backends included', async () => {
    for (const [name, pod] of allPods(await rendered()))
      expect([name, restrictedProblems(podOf(pod))]).toEqual([name, []]);
  });

  it('probes every service, the operator, every worker kind and the small backends', async () => {
    const all = await rendered();
    for (const m of all.filter((d) => d.kind === 'Deployment')) {
      const c = containerOf(m);
      expect([m.metadata.name, Boolean(c.readinessProbe), Boolean(c.livenessProbe)]).toEqual([
        m.metadata.name,
        true,
        true,
      ]);
      if (c.args?.[0] === 'serve') expect(c.startupProbe?.httpGet).toEqual(c.readinessProbe?.httpGet);
    }
    // The operator's worker pods: startup and liveness on the worker's own /healthz (argus worker --health-port).
    for (const [name, m] of Object.entries(workerWorkloads(all))) {
      const c = containerOf(m);
      const port = c.ports?.find((p) => p.name === 'health')?.containerPort;
      expect([name, c.livenessProbe?.httpGet, c.startupProbe?.httpGet]).toEqual([
        name,
        { path: '/healthz', port: 'health' },
        { path: '/healthz', port: 'health' },
      ]);
      const args = [...(c.command ?? []), ...(c.args ?? [])];
      expect(args.slice(args.indexOf('--health-port'))).toEqual(['--health-port', String(port)]);
    }
    const operator = containerOf(deployment(all, 'operator'));
    expect([operator.livenessProbe?.httpGet?.path, operator.readinessProbe?.httpGet?.path]).toEqual([
      '/healthz',
      '/readyz',
    ]);
  });

  it('references Secrets and never inlines one: no Secret object, no secret in a ConfigMap or a plain variable', async () => {
    const all = await rendered();
    expect(all.filter((m) => m.kind === 'Secret')).toEqual([]);
    for (const configMap of all.filter((m) => m.kind === 'ConfigMap'))
      for (const [key, value] of Object.entries((configMap.data ?? {}) as Record<string, string>)) {
        expect([configMap.metadata.name, key, SECRET_NAME.test(key)]).toEqual([configMap.metadata.name, key, false]);
        expect(value).not.toMatch(/:\/\/[^/@]+@/);
      }
    for (const [name, pod] of allPods(all))
      for (const e of (containerOf(pod).env ?? []) as EnvVar[])
        if (SECRET_NAME.test(e.name))
          expect([name, e.name, e.valueFrom?.secretKeyRef]).toEqual([name, e.name, expect.anything()]);
  });

  it('puts only the GPU workloads on the GPU pool, with the CUDA image and provider', async () => {
    const all = await rendered();
    const onGpu = new Set(set.includes(GPU[0]) ? ['frame-analysis', 'ingest', 'caption-run'] : []);
    const workloads: Array<[string, Manifest]> = [
      ...SERVICE_NAMES.map((s) => [s, deployment(all, s)!] as [string, Manifest]),
      ...Object.entries(workerWorkloads(all)),
    ];
    for (const [name, m] of workloads) {
      const pod = podOf(m);
      const container = containerOf(m);
      const env = name in workerWorkloads(all) ? workerEnv(all, name) : podEnv(all, name);
      const gpu = onGpu.has(name);
      expect({
        name,
        limit: container.resources?.limits?.['nvidia.com/gpu'],
        selector: pod.nodeSelector?.['nvidia.com/gpu.present'],
        tolerated: (pod.tolerations ?? []).some((t) => t.key === 'nvidia.com/gpu'),
        image: container.image?.endsWith('-cuda'),
        provider: env.ARGUS_ORT_PROVIDER,
      }).toEqual({
        name,
        limit: gpu ? '1' : undefined,
        selector: gpu ? 'true' : undefined,
        tolerated: gpu,
        image: gpu,
        provider: gpu ? 'cuda' : undefined,
      });
    }
  });

  it('binds every Role and ClusterRole to exactly the rules the code exports', async () => {
    const sets = exportedRuleSets();
    for (const role of (await rendered()).filter((m) => m.kind === 'Role' || m.kind === 'ClusterRole')) {
      const account = role.metadata.name.replace(/^rel-argus-/, '');
      const expected =
        account === 'operator-leader-election' ? leaderElectionRules('rel-argus-operator') : sets.get(account);
      expect([role.metadata.name, role.rules]).toEqual([role.metadata.name, expected]);
    }
  });

  it("never hides the image's models: no models volume, no ARGUS_MODELS_DIR of the chart's", async () => {
    for (const [name, pod] of allPods(await rendered())) {
      const container = containerOf(pod);
      expect([name, (container.env ?? []).some((e) => e.name === 'ARGUS_MODELS_DIR')]).toEqual([name, false]);
      // Only the extra models' read-only mount, beside the image's own models dir.
      const models = (container.volumeMounts ?? []).filter((m) => /models/.test(m.mountPath));
      expect(models.map((m) => [m.mountPath, m.readOnly])).toEqual(
        set.some((s) => s.startsWith('volumes.extraModels')) && argusCode(name, pod)
          ? [['/var/lib/argus/extra-models', true]]
          : [],
      );
    }
  });
});

/** A worker pod's environment: its ConfigMap (envFrom) in the release namespace, then its variables. */
function workerEnv(manifests: Manifest[], worker: string): Record<string, string> {
  const container = containerOf(workerWorkloads(manifests)[worker]);
  const vars: Record<string, string> = {};
  for (const source of container.envFrom ?? [])
    if (source.configMapRef)
      Object.assign(
        vars,
        manifests.find(
          (m) =>
            m.kind === 'ConfigMap' && m.metadata.name === source.configMapRef!.name && m.metadata.namespace === 'argus',
        )?.data,
      );
  for (const e of (container.env ?? []) as EnvVar[]) {
    const ref = e.valueFrom?.secretKeyRef;
    vars[e.name] = e.value ?? (ref ? secretValue(ref.name, ref.key) : '');
  }
  return vars;
}

describe('the chart', () => {
  it('configures every service and worker from backends.*, through their own config loaders', async () => {
    const all = await renderChart(...EXTERNAL);
    const s3Keys = [secretValue('s3-creds', 'AWS_ACCESS_KEY_ID'), secretValue('s3-creds', 'AWS_SECRET_ACCESS_KEY')];
    const dataprep = loadDataprepConfig(podEnv(all, 'dataprep'));
    expect(dataprep.storage).toMatchObject({ backend: 's3', endpoint: 'http://minio.storage:9000' });
    expect(dataprep.vectors).toMatchObject({ backend: 'weaviate', url: 'http://weaviate.vectors:8080' });
    expect(dataprep.platform.redisUrl).toBe('redis://redis.cache:6379/0');
    // The ingest worker builds the same pipeline from the same settings and Secret keys.
    const ingest = loadDataprepConfig(workerEnv(all, 'ingest'));
    expect(ingest.storage).toEqual(dataprep.storage);
    expect(ingest.vectors).toEqual(dataprep.vectors);
    const dataprepEnv = podEnv(all, 'dataprep');
    expect([dataprepEnv.MM_DATAPREP_S3_ACCESS_KEY_ID, dataprepEnv.MM_DATAPREP_S3_SECRET_ACCESS_KEY]).toEqual(s3Keys);
    expect(dataprepEnv.MM_DATAPREP_WEAVIATE_API_KEY).toBe(secretValue('weaviate-key', 'api-key'));

    const captionQa = loadCaptionQaConfig(podEnv(all, 'caption-qa'));
    expect(captionQa.vectors.backend).toBe('weaviate');
    expect(captionQa.llm).toMatchObject({ baseUrl: 'http://vllm.llm:8000/v1', model: 'qwen2.5-7b-instruct' });
    expect(podEnv(all, 'caption-qa').LLM_API_KEY).toBe(secretValue('llm-key', 'api-key'));
    expect(podEnv(all, 'caption-qa').CAPTION_QA_S3_SECRET_ACCESS_KEY).toBe(s3Keys[1]);

    const alertDispatch = loadAlertDispatchConfig(podEnv(all, 'alert-dispatch'));
    expect(alertDispatch.mqttBroker).toBe('mqtt://mosquitto.mqtt:1883');
    expect(alertDispatch.llm).toMatchObject({ baseUrl: 'http://vllm.llm:8000/v1' });
    const frameAnalysis = loadFrameAnalysisConfig(podEnv(all, 'frame-analysis'));
    expect(frameAnalysis.vlm).toMatchObject({ baseUrl: 'http://vllm-vl.llm:8000/v1', model: 'qwen2.5-vl-7b-instruct' });

    // caption-runs, its workers and camera-rules reach the chart's own services by their cluster names.
    const runs = loadCaptionRunsConfig(podEnv(all, 'caption-runs'));
    const runWorker = loadCaptionRunsConfig(workerEnv(all, 'caption-run'));
    for (const config of [runs, runWorker])
      expect(config).toMatchObject({
        mqttBroker: 'mqtt://mosquitto.mqtt:1883',
        captionQaUrl: 'http://rel-argus-caption-qa.argus.svc:4172/api',
        alertsUrl: 'http://rel-argus-alert-dispatch.argus.svc:8000/api/v1',
        vlm: { baseUrl: 'http://vllm-vl.llm:8000/v1' },
      });
    expect(workerEnv(all, 'caption-run').VLM_API_KEY).toBe(secretValue('vlm-key', 'api-key'));
    const rules = loadCameraRulesConfig(podEnv(all, 'camera-rules'));
    expect(rules).toMatchObject({
      dataprepUrl: 'http://rel-argus-dataprep.argus.svc:6007/v1/dataprep',
      alertDispatchUrl: 'http://rel-argus-alert-dispatch.argus.svc:8000/api/v1',
    });
    expect(loadCameraRulesConfig(workerEnv(all, 'camera-watcher')).dataprepUrl).toBe(rules.dataprepUrl);
    // No Mosquitto or Redis of the chart's when the backends are outside.
    expect(deployment(all, 'mosquitto')).toBeUndefined();
    expect(deployment(all, 'redis')).toBeUndefined();
  });

  it("reaches the chart's dataprep and alert-dispatch from camera-rules and its watcher pods, by their Services", async () => {
    const all = await renderChart();
    for (const env of [podEnv(all, 'camera-rules'), workerEnv(all, 'camera-watcher')]) {
      const config = loadCameraRulesConfig(env);
      for (const [service, url] of [
        ['dataprep', config.dataprepUrl],
        ['alert-dispatch', config.alertDispatchUrl],
      ]) {
        // http://<Service>.<namespace>.svc:<its port><the service's base path>, the base path its probes use.
        const { hostname, port, pathname } = new URL(url);
        const [name, namespace, svc] = hostname.split('.');
        expect([service, namespace, svc]).toEqual([service, 'argus', 'svc']);
        expect(find(all, 'Service', name)?.spec.selector['app.kubernetes.io/component']).toBe(service);
        expect(find(all, 'Service', name)?.spec.ports[0].port).toBe(Number(port));
        expect(`${pathname}/health`).toBe(containerOf(deployment(all, service)).readinessProbe?.httpGet?.path);
      }
    }
    // Without them in the chart, nothing points at a Service that is not there (the defaults: loopback).
    const alone = await renderChart('services.dataprep.enabled=false', 'services.alert-dispatch.enabled=false');
    for (const env of [podEnv(alone, 'camera-rules'), workerEnv(alone, 'camera-watcher')])
      expect([env.CAMERA_RULES_DATAPREP_URL, env.CAMERA_RULES_ALERT_DISPATCH_URL]).toEqual([undefined, undefined]);
  });

  it("gives camera-rules and every watcher pod Frigate's user from the Secret and one claim lease", async () => {
    const all = await renderChart(...FRIGATE);
    const service = podEnv(all, 'camera-rules');
    const worker = workerEnv(all, 'camera-watcher');
    for (const env of [service, worker]) {
      const config = loadCameraRulesConfig(env);
      expect(config.recorder).toMatchObject({
        kind: 'frigate',
        url: 'https://frigate.nvr:8971',
        credentials: {
          user: secretValue('frigate-user', 'user'),
          password: secretValue('frigate-user', 'password'),
        },
        mqttBroker: 'mqtt://rel-argus-mosquitto.argus.svc:1883',
      });
      expect(config.claimLeaseMs).toBe(120_000);
    }
    // The same references in the Deployment and in the operator's worker pods: secretKeyRef, never a value.
    const ref = (key: string) => ({ secretKeyRef: { name: 'frigate-user', key } });
    for (const m of [deployment(all, 'camera-rules'), workerWorkloads(all)['camera-watcher']])
      expect(envOf(m).filter((e) => e.name.startsWith('CAMERA_RULES_FRIGATE_'))).toEqual([
        { name: 'CAMERA_RULES_FRIGATE_USER', valueFrom: ref('user') },
        { name: 'CAMERA_RULES_FRIGATE_PASSWORD', valueFrom: ref('password') },
      ]);
    // The default lease is the service's own default, written once for both.
    const defaults = await renderChart();
    expect(
      [podEnv(defaults, 'camera-rules'), workerEnv(defaults, 'camera-watcher')].map(
        (e) => e.CAMERA_RULES_CLAIM_LEASE_SECONDS,
      ),
    ).toEqual(['60', '60']);
    expect(loadCameraRulesConfig(podEnv(defaults, 'camera-rules')).claimLeaseMs).toBe(
      loadCameraRulesConfig({}).claimLeaseMs,
    );
  });

  it('gives caption-runs and every caption-run worker pod one credentials key from the Secret, never its value', async () => {
    const all = await renderChart(...CAPTION_RUNS, 'services.caption-runs.credentials.key=sealing-key');
    const ref = { secretKeyRef: { name: 'caption-runs-credentials', key: 'sealing-key' } };
    // The same reference in the service's Deployment (it seals) and in the operator's worker pods (they open).
    for (const m of [deployment(all, 'caption-runs'), workerWorkloads(all)['caption-run']])
      expect(envOf(m).filter((e) => e.name === 'CAPTION_RUNS_CREDENTIALS_KEY')).toEqual([
        { name: 'CAPTION_RUNS_CREDENTIALS_KEY', valueFrom: ref },
      ]);
    // Never in a ConfigMap: not the service's, not the workers' copy in any namespace.
    for (const configMap of all.filter((m) => m.kind === 'ConfigMap'))
      expect([configMap.metadata.name, 'CAPTION_RUNS_CREDENTIALS_KEY' in (configMap.data ?? {})]).toEqual([
        configMap.metadata.name,
        false,
      ]);
    // Both loaders read the one key, so what the service seals the worker opens.
    const service = loadCaptionRunsConfig(podEnv(all, 'caption-runs'));
    const worker = loadCaptionRunsConfig(workerEnv(all, 'caption-run'));
    expect(service.credentialsKey).toBe(secretValue('caption-runs-credentials', 'sealing-key'));
    expect(worker.credentialsKey).toBe(service.credentialsKey);
    const url = 'rtsp://argus@cameras.lan:8554/front';
    const sealed = new CredentialSealer(service.credentialsKey!).seal('hunter2', url);
    expect(new CredentialSealer(worker.credentialsKey!).open(sealed, url)).toBe('hunter2');
    // The workers also post to the chart's caption-qa and alert-dispatch and publish on its broker, as the service.
    for (const config of [service, worker])
      expect(config).toMatchObject({
        mqttBroker: 'mqtt://rel-argus-mosquitto.argus.svc:1883',
        captionQaUrl: 'http://rel-argus-caption-qa.argus.svc:4172/api',
        alertsUrl: 'http://rel-argus-alert-dispatch.argus.svc:8000/api/v1',
      });
    // The key the documented command makes (openssl rand -base64 32: 44 characters) is one the loader takes; half
    // of it is refused.
    const documented = (await readFile(path.join(repoRoot, 'charts/argus/values.yaml'), 'utf8')).match(
      /--from-literal=key="\$\(openssl rand -base64 (\d+)\)"/,
    );
    expect(documented?.[1]).toBe('32');
    const key = (bytes: number) => randomBytes(bytes).toString('base64');
    expect(loadCaptionRunsConfig({ CAPTION_RUNS_CREDENTIALS_KEY: key(32) }).credentialsKey).toHaveLength(44);
    expect(() => loadCaptionRunsConfig({ CAPTION_RUNS_CREDENTIALS_KEY: key(16) })).toThrow(
      'CAPTION_RUNS_CREDENTIALS_KEY',
    );
    // Without the value, no pod gets the variable (embedded-only key files are no use in the cluster: starts with a
    // password are refused there).
    const defaults = await renderChart();
    for (const m of [deployment(defaults, 'caption-runs'), workerWorkloads(defaults)['caption-run']])
      expect(envOf(m).some((e) => e.name === 'CAPTION_RUNS_CREDENTIALS_KEY')).toBe(false);
  });

  it('scales caption-runs on Redis only, and camera-rules and frame-analysis without it', async () => {
    const byUrl = await renderChart(
      'services.caption-runs.replicas=3',
      'backends.redis.url=redis://redis.cache:6379/0',
    );
    expect(deployment(byUrl, 'caption-runs')?.spec.replicas).toBe(3);
    expect(loadCaptionRunsConfig(podEnv(byUrl, 'caption-runs')).platform.redisUrl).toBe('redis://redis.cache:6379/0');
    const bySecret = await renderChart('services.caption-runs.replicas=3', 'backends.redis.existingSecret=redis');
    expect(envOf(deployment(bySecret, 'caption-runs'))).toContainEqual({
      name: 'ARGUS_REDIS_URL',
      valueFrom: { secretKeyRef: { name: 'redis', key: 'redis-url' } },
    });
    const all = await renderChart(
      'services.camera-rules.replicas=2',
      'services.frame-analysis.replicas=2',
      'services.camera-rules.autoscaling.enabled=true',
    );
    expect(deployment(all, 'frame-analysis')?.spec.replicas).toBe(2);
    expect(find(all, 'HorizontalPodAutoscaler', 'rel-argus-camera-rules')).toBeDefined();
  });

  it.each([
    [
      'one claim, two mounts',
      ['services.camera-rules.directory.recordings.claimName=frigate-media'],
      ['frigate-media'],
    ],
    ['a read-only recordings claim and a claim for the analyses', DIRECTORY, ['frigate-media', 'argus-detections']],
  ])('mounts the recordings directory in camera-rules and every watcher pod alike (%s)', async (_name, set, claims) => {
    const all = await renderChart(...set);
    const pods = {
      'camera-rules': deployment(all, 'camera-rules'),
      'camera-watcher': workerWorkloads(all)['camera-watcher'],
    };
    const seen = Object.entries(pods).map(([name, m]) => {
      const config = loadCameraRulesConfig(name === 'camera-rules' ? podEnv(all, name) : workerEnv(all, name));
      expect(config.recorder.kind).toBe('directory');
      const { dir, detectionsDir } = config.recorder as { dir: string; detectionsDir: string };
      const volumes = podOf(m).volumes ?? [];
      const mountAt = (where: string) => {
        const mount = containerOf(m).volumeMounts?.find((v) => v.mountPath === where);
        const claim = volumes.find((v) => v.name === mount?.name)?.persistentVolumeClaim?.claimName;
        return { claim, subPath: mount?.subPath, readOnly: mount?.readOnly ?? false };
      };
      return { recordings: mountAt(dir), detections: mountAt(detectionsDir) };
    });
    // The same volumes in both: what the service lists, the watchers analyse, and the analyses are shared.
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0].recordings).toEqual({
      claim: claims[0],
      subPath: set.includes(DIRECTORY[1]) ? 'recordings' : undefined,
      readOnly: true,
    });
    expect(seen[0].detections).toEqual({
      claim: claims.at(-1),
      subPath: claims.length > 1 ? undefined : 'argus-detections',
      readOnly: false,
    });
    // Writable recordings when asked.
    const writable = await renderChart(...set, 'services.camera-rules.directory.recordings.readOnly=false');
    expect(
      containerOf(deployment(writable, 'camera-rules')).volumeMounts?.find(
        (v) => v.mountPath === '/var/lib/argus/camera-rules/recordings',
      )?.readOnly,
    ).toBe(false);
  });

  it("mounts caption-runs' media read-only in caption-runs and every caption-run worker pod alike", async () => {
    const all = await renderChart(...MEDIA);
    const pods = {
      'caption-runs': deployment(all, 'caption-runs'),
      'caption-run': workerWorkloads(all)['caption-run'],
    };
    const seen = Object.entries(pods).map(([name, m]) => {
      const { mediaRoot } = loadCaptionRunsConfig(name === 'caption-runs' ? podEnv(all, name) : workerEnv(all, name));
      const mount = containerOf(m).volumeMounts?.find((v) => v.mountPath === mediaRoot);
      const claim = podOf(m).volumes?.find((v) => v.name === mount?.name)?.persistentVolumeClaim;
      expect([name, restrictedProblems(podOf(m))]).toEqual([name, []]);
      return { mediaRoot, claim, subPath: mount?.subPath, readOnly: mount?.readOnly };
    });
    // The same files where the service checks a path at start and where the worker reads it.
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]).toEqual({
      mediaRoot: '/var/lib/argus/caption-runs/media',
      claim: { claimName: 'demo-media', readOnly: true },
      subPath: 'clips',
      readOnly: true,
    });
    // Without a claim: no files in either, no media volume.
    const plain = await renderChart();
    expect(loadCaptionRunsConfig(podEnv(plain, 'caption-runs')).mediaRoot).toBeUndefined();
    expect(loadCaptionRunsConfig(workerEnv(plain, 'caption-run')).mediaRoot).toBeUndefined();
    for (const m of [deployment(plain, 'caption-runs'), workerWorkloads(plain)['caption-run']])
      expect((podOf(m).volumes ?? []).filter((v) => v.persistentVolumeClaim)).toEqual([]);
  });

  it('runs a small Mosquitto by default and points every MQTT user at it; Redis from the chart on demand', async () => {
    const all = await renderChart('backends.redis.deploy.enabled=true');
    const broker = 'mqtt://rel-argus-mosquitto.argus.svc:1883';
    expect(find(all, 'Service', 'rel-argus-mosquitto')?.spec.ports).toEqual([
      { name: 'mosquitto', port: 1883, targetPort: 'mosquitto' },
    ]);
    expect(loadCaptionRunsConfig(podEnv(all, 'caption-runs')).mqttBroker).toBe(broker);
    expect(loadCaptionRunsConfig(workerEnv(all, 'caption-run')).mqttBroker).toBe(broker);
    expect(podEnv(all, 'alert-dispatch').MQTT_BROKER).toBe(broker);
    expect(find(all, 'Service', 'rel-argus-redis')?.spec.ports[0].port).toBe(6379);
    for (const service of SERVICE_NAMES)
      expect(podEnv(all, service).ARGUS_REDIS_URL).toBe('redis://rel-argus-redis.argus.svc:6379');
  });

  it('takes a Redis URL with a password from a Secret only', async () => {
    const all = await renderChart('backends.redis.existingSecret=redis', 'backends.redis.urlKey=url');
    for (const service of SERVICE_NAMES)
      expect(envOf(deployment(all, service))).toContainEqual({
        name: 'ARGUS_REDIS_URL',
        valueFrom: { secretKeyRef: { name: 'redis', key: 'url' } },
      });
    await expect(renderChart('backends.redis.url=redis://:hunter2@redis:6379')).rejects.toThrow(
      'backends.redis.url holds credentials in its URL, and it would land in a ConfigMap',
    );
  });

  it.each([
    [
      'caption-runs without a broker',
      ['backends.mqtt.mosquitto.enabled=false'],
      'services.caption-runs needs an MQTT broker (its caption workers publish there and the service relays them): set backends.mqtt.url, or backends.mqtt.mosquitto.enabled=true',
    ],
    [
      'camera-rules on Frigate without a broker',
      [
        'backends.mqtt.mosquitto.enabled=false',
        'services.caption-runs.enabled=false',
        'services.camera-rules.env.CAMERA_RULES_FRIGATE_URL=http://frigate:5000',
      ],
      "services.camera-rules reads Frigate's events over MQTT: set backends.mqtt.url",
    ],
    [
      'a Frigate user without Frigate',
      ['services.camera-rules.frigate.existingSecret=frigate-user'],
      'services.camera-rules.frigate.existingSecret holds a Frigate user for Frigate: set services.camera-rules.frigate.url too',
    ],
    [
      'Frigate and a recordings directory at once',
      ['services.camera-rules.frigate.url=http://frigate:5000', DIRECTORY[0]],
      'services.camera-rules: Frigate (frigate.url) and the recordings directory (directory.recordings.claimName) are two recorders: set one',
    ],
    [
      'a detections claim without recordings',
      ['services.camera-rules.directory.detections.claimName=argus-detections'],
      'services.camera-rules.directory.detections.claimName holds the analyses of recordings: set directory.recordings.claimName too',
    ],
    [
      'a Frigate password in the URL (values.schema.json)',
      ['services.camera-rules.frigate.url=http://argus:pw@frigate:5000'],
      'services.camera-rules.frigate.url: Does not match pattern',
    ],
    [
      'a claim lease too short (values.schema.json)',
      ['services.camera-rules.claimLeaseSeconds=1'],
      'services.camera-rules.claimLeaseSeconds: Must be greater than or equal to 3',
    ],
    [
      'a Frigate password in a ConfigMap',
      ['services.camera-rules.env.CAMERA_RULES_FRIGATE_PASSWORD=hunter2'],
      'services.camera-rules.env.CAMERA_RULES_FRIGATE_PASSWORD looks like a secret, and values land in a ConfigMap',
    ],
    [
      'a key in a ConfigMap',
      ['services.caption-qa.env.LLM_API_KEY=sk-123'],
      'services.caption-qa.env.LLM_API_KEY looks like a secret, and values land in a ConfigMap',
    ],
    [
      'a URL with a password in a ConfigMap',
      ['services.alert-dispatch.env.WEBHOOK_URL=https://user:pw@hooks.example.com/x'],
      'services.alert-dispatch.env.WEBHOOK_URL holds credentials in its URL',
    ],
    [
      'replicas without Redis',
      ['services.alert-dispatch.replicas=2'],
      'services.alert-dispatch: more than one replica needs Redis',
    ],
    [
      'replicas of caption-runs without Redis (the start claims)',
      ['services.caption-runs.replicas=2'],
      'services.caption-runs: more than one replica needs Redis',
    ],
    [
      'autoscaling caption-runs without Redis',
      ['services.caption-runs.autoscaling.enabled=true'],
      'services.caption-runs: more than one replica needs Redis',
    ],
    [
      'a credentials key in a ConfigMap',
      ['services.caption-runs.env.CAPTION_RUNS_CREDENTIALS_KEY=0123456789abcdef0123456789abcdef'],
      'services.caption-runs.env.CAPTION_RUNS_CREDENTIALS_KEY looks like a secret, and values land in a ConfigMap',
    ],
    [
      'a credentials Secret that cannot be a name (values.schema.json)',
      ['services.caption-runs.credentials.existingSecret=Caption_Keys'],
      'services.caption-runs.credentials.existingSecret: Does not match pattern',
    ],
    [
      "a media root of caption-runs' own (its worker pods would not have the files)",
      ['services.caption-runs.env.CAPTION_RUNS_MEDIA_ROOT=/media'],
      'services.caption-runs.env.CAPTION_RUNS_MEDIA_ROOT: set services.caption-runs.media.claimName instead',
    ],
    [
      'a media root in the shared env beside a media claim',
      [MEDIA[0], 'env.CAPTION_RUNS_MEDIA_ROOT=/media'],
      'env.CAPTION_RUNS_MEDIA_ROOT: set services.caption-runs.media.claimName instead',
    ],
    [
      'a media claim that cannot be a name (values.schema.json)',
      ['services.caption-runs.media.claimName=Demo_Media'],
      'services.caption-runs.media.claimName: Does not match pattern',
    ],
    [
      'replicas of dataprep on a pod volume',
      ['services.dataprep.replicas=2', 'backends.redis.deploy.enabled=true'],
      "services.dataprep: more than one replica needs its media in S3, not on one pod's volume",
    ],
    [
      'autoscaling caption-qa on LanceDB',
      [
        'services.caption-qa.autoscaling.enabled=true',
        'backends.redis.deploy.enabled=true',
        'backends.s3.endpoint=http://s3:9000',
      ],
      "services.caption-qa: more than one replica needs its vectors in Weaviate, not in one pod's LanceDB",
    ],
    [
      'an ingress with no authentication',
      ['ingress.enabled=true'],
      'ingress: it would expose every service with no authentication. Set auth.apiKeys.existingSecret',
    ],
    [
      'an unknown value (values.schema.json)',
      ['backends.s3.endpiont=x'],
      'backends.s3: Additional property endpiont is not allowed',
    ],
    [
      'a wrong URL scheme (values.schema.json)',
      ['backends.mqtt.url=http://broker:1883'],
      'backends.mqtt.url: Does not match pattern',
    ],
  ])('refuses %s, saying what to set', async (_name, set, message) => {
    await expect(renderChart(...set)).rejects.toThrow(message);
  });

  it('renders an ingress behind a proxy that authenticates, or with externalAuth', async () => {
    for (const auth of [
      'ingress.annotations.traefik\\.ingress\\.kubernetes\\.io/router\\.middlewares=auth-forward@kubernetescrd',
      'ingress.externalAuth=true',
    ])
      expect(find(await renderChart('ingress.enabled=true', auth), 'Ingress', 'rel-argus')).toBeDefined();
  });

  it('gives every service and every worker pod the API keys file from the Secret', async () => {
    const all = await renderChart(KEYS, 'auth.apiKeys.key=keys.txt');
    const file = '/var/run/secrets/argus/api-keys/api-keys';
    const pods: Array<[string, Manifest]> = [
      ...SERVICE_NAMES.map((s) => [s, deployment(all, s)!] as [string, Manifest]),
      ...Object.entries(workerWorkloads(all)),
    ];
    for (const [name, m] of pods) {
      const env = name in workerWorkloads(all) ? workerEnv(all, name) : podEnv(all, name);
      expect([name, env.ARGUS_API_KEYS_FILE]).toEqual([name, file]);
      expect(podOf(m).volumes).toContainEqual({
        name: 'api-keys',
        secret: { secretName: 'argus-api-keys', items: [{ key: 'keys.txt', path: 'api-keys' }] },
      });
      expect(containerOf(m).volumeMounts).toContainEqual({
        name: 'api-keys',
        mountPath: '/var/run/secrets/argus/api-keys',
        readOnly: true,
      });
    }
    // Without keys, no file is named (embedded on loopback needs none; an ingress is refused then).
    expect(podEnv(await renderChart(), 'dataprep').ARGUS_API_KEYS_FILE).toBeUndefined();
  });

  // Reading the keys file is the services' (ARGUS_API_KEYS_FILE in the platform settings, the API keys work of issue
  // 31): where the platform schema has it, each pod's settings, with the mounted file standing at a local path, load
  // the keys through the service's own loader; before that, the test waits for it.
  (KEYS_FILE_KNOWN ? it : it.skip)('has every service and worker read its API keys from the mounted file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'argus-chart-keys-'));
    try {
      const file = path.join(dir, 'api-keys');
      const keys = ['chart-key-0123456789abcdef', 'chart-key-fedcba9876543210'];
      await writeFile(file, `${keys.join('\n')}\n`);
      const all = await renderChart(KEYS);
      const workerServices = { ingest: 'dataprep', 'camera-watcher': 'camera-rules', 'caption-run': 'caption-runs' };
      const envs: Array<[string, Record<string, string>]> = [
        ...SERVICE_NAMES.map((s) => [s, podEnv(all, s)] as [string, Record<string, string>]),
        ...Object.entries(workerServices).map(([w, s]) => [s, workerEnv(all, w)] as [string, Record<string, string>]),
      ];
      for (const [service, env] of envs) {
        expect(env.ARGUS_API_KEYS_FILE).toBe('/var/run/secrets/argus/api-keys/api-keys');
        const config = (await SERVICES[service]()).loadConfig({ ...env, ARGUS_API_KEYS_FILE: file }) as {
          platform: { apiKeys?: readonly string[] };
        };
        expect([service, config.platform.apiKeys]).toEqual([service, keys]);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("mounts extra models read-only beside the image's, in services and workers", async () => {
    const all = await renderChart('volumes.extraModels.persistentVolumeClaim.claimName=models');
    for (const m of [deployment(all, 'dataprep'), ...Object.values(workerWorkloads(all))]) {
      expect(podOf(m).volumes).toContainEqual({ name: 'extra-models', persistentVolumeClaim: { claimName: 'models' } });
      expect(containerOf(m).volumeMounts).toContainEqual({
        name: 'extra-models',
        mountPath: '/var/lib/argus/extra-models',
        readOnly: true,
      });
    }
  });

  it('runs the operator twice with leader election, a PodDisruptionBudget and its metrics Service', async () => {
    const all = await renderChart();
    const operator = deployment(all, 'operator');
    expect(operator?.spec.replicas).toBe(2);
    expect(envOf(operator)).toContainEqual({ name: 'ARGUS_LEADER_ELECTION', value: 'true' });
    expect(find(all, 'PodDisruptionBudget', 'rel-argus-operator')?.spec).toMatchObject({
      maxUnavailable: 1,
      selector: { matchLabels: { 'app.kubernetes.io/component': 'operator' } },
    });
    expect(find(all, 'Service', 'rel-argus-operator')?.spec.ports).toEqual([
      { name: 'http', port: 8080, targetPort: 'http' },
    ]);
    // One replica: no budget that would block every drain.
    expect(find(await renderChart('operator.replicas=1'), 'PodDisruptionBudget', 'rel-argus-operator')).toBeUndefined();
  });

  it('adds a PodDisruptionBudget where replicas > 1 and an HPA with autoscaling, leaving replicas to it', async () => {
    const all = await renderChart(...EXTERNAL);
    const budgets = all.filter((m) => m.kind === 'PodDisruptionBudget').map((m) => m.metadata.name);
    expect(budgets.sort()).toEqual(
      ['alert-dispatch', 'caption-qa', 'dataprep', 'frame-analysis', 'operator'].map((s) => `rel-argus-${s}`),
    );
    const hpa = find(all, 'HorizontalPodAutoscaler', 'rel-argus-frame-analysis');
    expect(hpa?.spec).toMatchObject({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'rel-argus-frame-analysis' },
      minReplicas: 2,
      maxReplicas: 5,
    });
    expect(deployment(all, 'frame-analysis')?.spec.replicas).toBeUndefined();
    expect(deployment(all, 'dataprep')?.spec.replicas).toBe(2);
  });

  it("installs on kind as hack/kind-up.sh does: the GPU pool's node without a device, on CPU, with the loaded image", async () => {
    const all = await renderChartWith(
      { valuesFiles: ['hack/kind-values.yaml'] },
      'image.repository=argus',
      'image.tag=dev',
      'gpu.image=argus:dev',
    );
    expect(await apiSchemaProblems([...all, ...Object.values(workerWorkloads(all))])).toEqual([]);
    for (const [name, pod] of allPods(all)) expect([name, restrictedProblems(podOf(pod))]).toEqual([name, []]);
    const pool = (m: Manifest) => ({
      selector: podOf(m).nodeSelector,
      tolerations: podOf(m).tolerations,
      gpus: containerOf(m).resources?.limits?.['nvidia.com/gpu'],
      image: containerOf(m).image,
    });
    const onPool = {
      selector: { 'nvidia.com/gpu.present': 'true' },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      gpus: undefined,
      image: 'argus:dev',
    };
    const workers = workerWorkloads(all);
    for (const m of [deployment(all, 'frame-analysis')!, workers.ingest, workers['caption-run']])
      expect(pool(m)).toEqual(onPool);
    for (const m of [deployment(all, 'dataprep')!, workers['camera-watcher']])
      expect(pool(m)).toEqual({ selector: undefined, tolerations: undefined, gpus: undefined, image: 'argus:dev' });
    expect(podEnv(all, 'frame-analysis').ARGUS_ORT_PROVIDER).toBe('cpu');
    expect(podEnv(all, 'dataprep').ARGUS_API_KEYS_FILE).toBe('/var/run/secrets/argus/api-keys/api-keys');
    // The script parses, and installs with these values and the Secret they name.
    await run('bash', ['-n', path.join(repoRoot, 'hack/kind-up.sh')]);
    const script = await readFile(path.join(repoRoot, 'hack/kind-up.sh'), 'utf8');
    expect(script).toContain('-f "$root/hack/kind-values.yaml"');
    expect(script).toContain('--set gpu.image="$image"');
    expect(script).toContain('create secret generic argus-api-keys --from-literal=api-keys=');
    expect(script).toContain('create secret generic caption-runs-credentials --from-literal=key=');
    expect(envOf(deployment(all, 'caption-runs'))).toContainEqual({
      name: 'CAPTION_RUNS_CREDENTIALS_KEY',
      valueFrom: { secretKeyRef: { name: 'caption-runs-credentials', key: 'key' } },
    });
  });

  it('renders a ServiceMonitor only where the Prometheus operator is, over every service and the operator', async () => {
    expect((await renderChart()).filter((m) => m.kind === 'ServiceMonitor')).toEqual([]);
    const all = await renderChartWith({ apiVersions: ['monitoring.coreos.com/v1/ServiceMonitor'] });
    const monitor = find(all, 'ServiceMonitor', 'rel-argus');
    expect(monitor?.spec.endpoints).toEqual([{ port: 'http', path: '/metrics', interval: '30s' }]);
    const selector = monitor?.spec.selector.matchLabels as Record<string, string>;
    const selected = all.filter(
      (m) => m.kind === 'Service' && Object.entries(selector).every(([k, v]) => m.metadata.labels?.[k] === v),
    );
    expect(selected.map((m) => m.metadata.name.replace('rel-argus-', '')).sort()).toEqual(
      [...SERVICE_NAMES, 'operator'].sort(),
    );
  });

  it('admits traffic to each service only from the release, its workers and networkPolicy.from', async () => {
    const from = 'networkPolicy.from[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=ingress-nginx';
    const all = await renderChart('networkPolicy.enabled=true', 'worker.namespaces={team-a}', from);
    const policies = all.filter((m) => m.kind === 'NetworkPolicy');
    expect(policies.map((p) => p.metadata.name.replace('rel-argus-', '')).sort()).toEqual(
      [...SERVICE_NAMES, 'mosquitto', 'operator'].sort(),
    );
    for (const policy of policies) {
      // It selects the pods of one Deployment of the chart.
      const selector = policy.spec.podSelector.matchLabels as Record<string, string>;
      const selected = all.filter(
        (m) =>
          m.kind === 'Deployment' &&
          Object.entries(selector).every(([k, v]) => m.spec.template.metadata.labels[k] === v),
      );
      expect(selected).toHaveLength(1);
      expect(policy.spec.ingress[0].from).toEqual([
        { podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'rel' } } },
        {
          namespaceSelector: {
            matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['argus', 'team-a'] }],
          },
          podSelector: { matchLabels: { 'app.kubernetes.io/managed-by': 'argus-operator' } },
        },
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
      ]);
    }
    // The operator's worker pods carry the label the policies admit.
    for (const m of Object.values(workerWorkloads(all)))
      expect(m.spec.template.metadata.labels['app.kubernetes.io/managed-by']).toBe('argus-operator');
  });

  it("has a helm test hook that calls every enabled service's health and the operator's through their Services", async () => {
    const all = await renderChart('services.camera-rules.enabled=false');
    const test = find(all, 'Pod', 'rel-argus-test-health');
    expect(test?.metadata.annotations?.['helm.sh/hook']).toBe('test');
    const urls = JSON.parse(envOf(test).find((e) => e.name === 'ARGUS_HEALTH_URLS')!.value!) as Record<string, string>;
    expect(Object.keys(urls).sort()).toEqual([...SERVICE_NAMES.filter((s) => s !== 'camera-rules'), 'operator'].sort());
    for (const [name, url] of Object.entries(urls)) {
      const { hostname, port, pathname } = new URL(url);
      const [service, namespace] = hostname.split('.');
      expect(namespace).toBe('argus');
      expect(find(all, 'Service', service)?.spec.ports[0].port).toBe(Number(port));
      const probe = containerOf(deployment(all, name)).readinessProbe?.httpGet?.path;
      expect(pathname).toBe(name === 'operator' ? '/healthz' : probe);
    }
  });

  it('prints one curl per enabled service in NOTES, with the API key when keys are checked', async () => {
    const notes = await renderNotes('ingress.enabled=true', KEYS);
    const curls = notes.split('\n').filter((line) => line.trim().startsWith('curl'));
    for (const [service, path] of [
      ['dataprep', 'http://argus.example.com/v1/dataprep/media/upload'],
      ['alert-dispatch', 'http://argus.example.com/api/v1/alerts'],
      ['frame-analysis', 'http://frame-analysis.argus.example.com/api/v1/analyze/batch'],
      ['caption-qa', 'http://caption-qa.argus.example.com/api/chat'],
      ['caption-runs', 'http://caption-runs.argus.example.com/api/generate_captions_alerts'],
      ['camera-rules', 'http://camera-rules.argus.example.com/rules/'],
    ])
      expect([service, curls.some((c) => c.includes(path))]).toEqual([service, true]);
    expect(curls.every((c) => c.includes('-H "Authorization: Bearer $ARGUS_API_KEY"'))).toBe(true);
    const local = await renderNotes();
    expect(local).toContain('kubectl port-forward -n argus svc/rel-argus-dataprep 6007');
    expect(local).not.toContain('Authorization');
  });
});
