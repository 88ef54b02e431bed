import { beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { SERVICES } from '../bin/services.js';
import { crdManifests } from '../operator/api/crd-manifests.js';
import { manifestProblems } from '../operator/api/crd-validation.js';
import type { CustomResourceDefinition } from '../operator/api/crd.js';
import { loadClusterOperatorConfig } from '../operator/config.js';
import { loadAlertDispatchConfig } from '../services/alert-dispatch/config.js';
import { loadCameraRulesConfig } from '../services/camera-rules/config.js';
import { loadCaptionQaConfig } from '../services/caption-qa/config.js';
import { loadCaptionRunsConfig } from '../services/caption-runs/config.js';
import { loadDataprepConfig } from '../services/dataprep/config.js';
import { loadFrameAnalysisConfig } from '../services/frame-analysis/config.js';
import {
  CAMERA_WATCHER_WORKER_RULES,
  CAPTION_RUN_WORKER_RULES,
  INGEST_WORKER_RULES,
  leaderElectionRules,
  OPERATOR_RULES,
} from '../operator/drivers/kubernetes/rbac.js';
import { exportedRuleSets, rbacRuleFiles } from './rbac-rule-files.js';
import { helmTool, podEnv, renderChart, secretValue, type Manifest } from './helm-template.js';
import { apiSchemaProblems } from './k8s-schema.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const chart = path.join(repoRoot, 'charts/argus');
const run = promisify(execFile);
const template = renderChart;
let helm: string;
let env: NodeJS.ProcessEnv;
/** The workers' chart accounts (rule files, ServiceAccounts, ConfigMaps), bound per worker namespace. */
const WORKER_ACCOUNTS = ['ingest-worker', 'camera-watcher-worker', 'caption-run-worker'];
/** An ingress with API keys checked behind it (an ingress without any authentication is refused). */
const INGRESS = ['ingress.enabled=true', 'auth.apiKeys.existingSecret=argus-api-keys'];
/** The services `argus serve` knows (bin/services.ts), as the chart's refusals list them. */
const KNOWN_SERVICES = Object.keys(SERVICES).sort().join(', ');

beforeAll(async () => {
  ({ binary: helm, env } = await helmTool());
});

const find = (manifests: Manifest[], kind: string, name: string) =>
  manifests.find((m) => m.kind === kind && m.metadata.name === name);
const envOf = (deployment: Manifest | undefined) =>
  Object.fromEntries(
    (deployment?.spec.template.spec.containers[0].env as { name: string; value?: string }[]).map((e) => [
      e.name,
      e.value,
    ]),
  );

/** The rendered ingress as [host, path, backend Service] rows, sorted. */
const routesOf = (ingress: Manifest | undefined) =>
  (ingress?.spec.rules as any[])
    .flatMap((rule) => rule.http.paths.map((p: any) => [rule.host, p.path, p.pathType, p.backend.service.name]))
    .sort();

describe('the helm chart', () => {
  it('passes helm lint --strict, cluster-wide and namespaced', async () => {
    await run(helm, ['lint', '--strict', chart], { env });
    await run(
      helm,
      ['lint', '--strict', chart, ...['watchNamespace=team-a', ...INGRESS].flatMap((s) => ['--set', s])],
      { env },
    );
  });

  it.each([
    ['defaults', []],
    [
      'namespaced, with ingress and GPU workers',
      ['watchNamespace=team-a', ...INGRESS, 'worker.resources.limits.nvidia\\.com/gpu=1'],
    ],
    [
      'frame-analysis on a GPU pool, caption-qa on Weaviate and S3, one host per service',
      [
        ...INGRESS,
        'ingress.hosts.dataprep=media.test',
        'ingress.hosts.alert-dispatch=alerts.test',
        'services.frame-analysis.env.ARGUS_ORT_PROVIDER=cuda',
        'services.frame-analysis.resources.limits.nvidia\\.com/gpu=1',
        'services.frame-analysis.nodeSelector.nvidia\\.com/gpu\\.present=true',
        'services.frame-analysis.tolerations[0].key=nvidia.com/gpu',
        'services.frame-analysis.tolerations[0].operator=Exists',
        'services.frame-analysis.tolerations[0].effect=NoSchedule',
        'services.caption-qa.env.CAPTION_QA_VECTORDB_BACKEND=weaviate',
        'services.caption-qa.env.CAPTION_QA_WEAVIATE_URL=http://weaviate:8080',
        'services.caption-qa.envFromSecret=caption-qa-keys',
      ],
    ],
    [
      'without CRDs, with volumes and a secret',
      [
        'crds.enabled=false',
        'volumes.extraModels.persistentVolumeClaim.claimName=m',
        'services.dataprep.envFromSecret=s',
        'services.dataprep.extraVolumes[0].name=ingest',
        'services.dataprep.extraVolumes[0].persistentVolumeClaim.claimName=ingest',
        'services.dataprep.extraVolumeMounts[0].name=ingest',
        'services.dataprep.extraVolumeMounts[0].mountPath=/ingest',
      ],
    ],
  ])('renders objects the Kubernetes API schema accepts (%s)', async (_name, set) => {
    const manifests = await template(...set);
    expect(manifests.length).toBeGreaterThan(10);
    expect(await apiSchemaProblems(manifests)).toEqual([]);
  });

  it('has the API schema check refuse an object the API server would (a volume mount without a path)', async () => {
    const problems = await apiSchemaProblems(await template('services.dataprep.extraVolumeMounts[0].name=ingest'));
    expect(problems.join('\n')).toMatch(/Deployment\/rel-argus-dataprep: .*mountPath/);
  });

  it('refuses a value of the wrong type before rendering (values.schema.json), naming it', async () => {
    await expect(template('operator.port=http')).rejects.toThrow(/operator\.port: Invalid type\. Expected: integer/);
  });

  it('renders the CRDs npm run crds generates, kept on uninstall, and the samples are valid against them', async () => {
    const rendered = (await template()).filter((m) => m.kind === 'CustomResourceDefinition');
    const generated = crdManifests();
    expect(rendered.map((m) => m.metadata.name).sort()).toEqual(generated.map((m) => m.crd.metadata.name).sort());
    for (const { crd } of generated) {
      const mine = find(rendered, 'CustomResourceDefinition', crd.metadata.name) as unknown as CustomResourceDefinition;
      // Through Helm's fromYaml/toYaml and back, the spec (enums like "True" included) must be what the generator made.
      expect(mine.spec).toEqual(JSON.parse(JSON.stringify(crd.spec)));
      expect(mine.metadata).toMatchObject({ annotations: { 'helm.sh/resource-policy': 'keep' } });
      const sample = YAML.parse(
        await readFile(path.join(repoRoot, 'crds/samples', `${crd.spec.names.kind.toLowerCase()}.yaml`), 'utf8'),
      );
      expect(manifestProblems(mine, sample)).toEqual([]);
    }
  });

  it('leaves the CRDs out with crds.enabled=false, and lets them go with crds.keep=false', async () => {
    expect((await template('crds.enabled=false')).filter((m) => m.kind === 'CustomResourceDefinition')).toEqual([]);
    const loose = (await template('crds.keep=false')).filter((m) => m.kind === 'CustomResourceDefinition');
    // Every CRD `npm run crds` writes to crds/.
    const crds = (await readdir(path.join(repoRoot, 'crds'))).filter((f) => f.endsWith('.argus.dev.yaml'));
    expect(crds.length).toBeGreaterThan(0);
    expect(loose.map((m) => `${m.metadata.name}.yaml`).sort()).toEqual(crds.sort());
    for (const crd of loose) expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBeUndefined();
  });

  it('grants the operator and the ingest worker exactly the rules the code exports', async () => {
    const manifests = await template();
    expect(find(manifests, 'ClusterRole', 'rel-argus-operator')?.rules).toEqual(OPERATOR_RULES);
    expect(find(manifests, 'ClusterRoleBinding', 'rel-argus-operator')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'rel-argus-operator' },
      subjects: [{ kind: 'ServiceAccount', name: 'rel-argus-operator', namespace: 'argus' }],
    });
    // The Lease and the leader Event only in the operator's namespace, the update only of its own Lease.
    expect(find(manifests, 'Role', 'rel-argus-operator-leader-election')).toMatchObject({
      metadata: { namespace: 'argus' },
      rules: leaderElectionRules('rel-argus-operator'),
    });
    expect(find(manifests, 'RoleBinding', 'rel-argus-operator-leader-election')).toMatchObject({
      roleRef: { kind: 'Role', name: 'rel-argus-operator-leader-election' },
      subjects: [{ kind: 'ServiceAccount', name: 'rel-argus-operator', namespace: 'argus' }],
    });
    expect(envOf(find(manifests, 'Deployment', 'rel-argus-operator')).ARGUS_LEADER_ELECTION_LEASE_NAME).toBe(
      'rel-argus-operator',
    );
    for (const [account, rules] of [
      ['ingest-worker', INGEST_WORKER_RULES],
      ['camera-watcher-worker', CAMERA_WATCHER_WORKER_RULES],
      ['caption-run-worker', CAPTION_RUN_WORKER_RULES],
    ] as const) {
      expect(find(manifests, 'ClusterRole', `rel-argus-${account}`)?.rules).toEqual(rules);
      expect(find(manifests, 'RoleBinding', `rel-argus-${account}`)).toMatchObject({
        metadata: { namespace: 'argus' },
        roleRef: { kind: 'ClusterRole', name: `rel-argus-${account}` },
        subjects: [{ kind: 'ServiceAccount', name: `rel-argus-${account}`, namespace: 'argus' }],
      });
    }
    const operator = find(manifests, 'Deployment', 'rel-argus-operator');
    expect(operator?.spec.template.spec.serviceAccountName).toBe('rel-argus-operator');
    expect(envOf(operator).ARGUS_WORKER_SERVICE_ACCOUNT).toBe('rel-argus-ingest-worker');
    expect(find(manifests, 'ServiceAccount', 'rel-argus-ingest-worker')).toBeDefined();
    expect(envOf(operator).WATCH_NAMESPACE).toBeUndefined();
  });

  it("binds each service's ServiceAccount to the rules rbac.ts exports for it (<SERVICE>_RULES), and no others", async () => {
    const manifests = await template();
    const services = [...exportedRuleSets()].filter(([name]) => name !== 'operator' && !WORKER_ACCOUNTS.includes(name));
    for (const [service, rules] of services) {
      expect(find(manifests, 'Role', `rel-argus-${service}`)?.rules).toEqual(rules);
      expect(find(manifests, 'RoleBinding', `rel-argus-${service}`)?.subjects).toEqual([
        { kind: 'ServiceAccount', name: `rel-argus-${service}`, namespace: 'argus' },
      ]);
    }
    const bound = manifests.filter((m) => m.kind === 'RoleBinding' || m.kind === 'ClusterRoleBinding');
    expect(bound.map((m) => m.metadata.name).sort()).toEqual(
      [
        'rel-argus-operator',
        'rel-argus-operator-leader-election',
        ...WORKER_ACCOUNTS.map((w) => `rel-argus-${w}`),
        ...services.map(([s]) => `rel-argus-${s}`),
      ].sort(),
    );
  });

  it('uses Roles only when the operator watches one namespace (WATCH_NAMESPACE)', async () => {
    const manifests = await template('watchNamespace=team-a');
    expect(manifests.filter((m) => m.kind.startsWith('Cluster') && m.kind !== 'CustomResourceDefinition')).toEqual([]);
    expect(find(manifests, 'Role', 'rel-argus-operator')).toMatchObject({
      metadata: { namespace: 'team-a' },
      rules: OPERATOR_RULES,
    });
    expect(find(manifests, 'RoleBinding', 'rel-argus-operator')?.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'rel-argus-operator', namespace: 'argus' },
    ]);
    // The Lease stays beside the operator, in the release namespace, with the leader Event it records there.
    expect(find(manifests, 'Role', 'rel-argus-operator-leader-election')).toMatchObject({
      metadata: { namespace: 'argus' },
      rules: leaderElectionRules('rel-argus-operator'),
    });
    // Workers run in the watched namespace only: their ServiceAccount, settings and Role are there.
    for (const account of WORKER_ACCOUNTS)
      for (const kind of ['ServiceAccount', 'ConfigMap', 'Role', 'RoleBinding'])
        expect(
          manifests
            .filter((m) => m.kind === kind && m.metadata.name === `rel-argus-${account}`)
            .map((m) => m.metadata.namespace),
        ).toEqual(['team-a']);
    expect(envOf(find(manifests, 'Deployment', 'rel-argus-operator')).WATCH_NAMESPACE).toBe('team-a');
    expect(envOf(find(manifests, 'Deployment', 'rel-argus-dataprep')).ARGUS_NAMESPACE).toBe('team-a');
  });

  it.each([
    [
      'every namespace, opted in by worker.namespaces',
      ['worker.namespaces={team-a,team-b}'],
      ['argus', 'team-a', 'team-b'],
    ],
    ['watchNamespace', ['watchNamespace=team-a', 'worker.namespaces={team-a}'], ['team-a']],
  ])(
    'renders what worker pods reference into each namespace where IngestJobs may run them (%s)',
    async (_mode, set, namespaces) => {
      const manifests = await template(
        ...set,
        'services.dataprep.env.MM_DATAPREP_STORAGE_BACKEND=s3',
        'services.dataprep.env.MM_DATAPREP_S3_ENDPOINT=http://minio:9000',
      );
      const vars = envOf(find(manifests, 'Deployment', 'rel-argus-operator'));
      const { worker } = loadClusterOperatorConfig({ ...vars, ARGUS_POD_NAME: 'op' }).kubernetes;
      const workerRole = manifests.find(
        (m) => m.kind.endsWith('Role') && m.metadata.name === 'rel-argus-ingest-worker',
      );
      for (const namespace of namespaces) {
        const here = (kind: string, name: string) =>
          manifests.find((m) => m.kind === kind && m.metadata.name === name && m.metadata.namespace === namespace);
        // A pod can only use a ServiceAccount and ConfigMaps of its own namespace.
        expect(here('ServiceAccount', worker.serviceAccountName!)).toBeDefined();
        for (const source of worker.envFrom ?? []) {
          if (!('configMapRef' in source)) continue;
          const settings = here('ConfigMap', source.configMapRef.name);
          // The worker builds dataprep's ingest pipeline from them: dataprep's own config accepts them.
          expect(loadDataprepConfig(settings?.data).storage).toMatchObject({
            backend: 's3',
            endpoint: 'http://minio:9000',
          });
        }
        expect(here('RoleBinding', 'rel-argus-ingest-worker')).toMatchObject({
          roleRef: { kind: workerRole?.kind, name: 'rel-argus-ingest-worker' },
          subjects: [{ kind: 'ServiceAccount', name: worker.serviceAccountName, namespace }],
        });
      }
      const rendered = manifests.filter(
        (m) => m.metadata.name === 'rel-argus-ingest-worker' && m.kind === 'ServiceAccount',
      );
      expect(rendered.map((m) => m.metadata.namespace).sort()).toEqual(namespaces);
    },
  );

  it('refuses worker namespaces the operator would not reconcile in watchNamespace mode', async () => {
    await expect(template('watchNamespace=team-a', 'worker.namespaces={team-b}')).rejects.toThrow(
      'worker.namespaces: team-b is not watchNamespace (team-a): the operator runs no IngestJob there',
    );
  });

  it('gives the operator settings its own config accepts: worker placement for a GPU pool, leader election', async () => {
    const manifests = await template(
      'worker.nodeSelector.nvidia\\.com/gpu\\.present=true',
      'worker.tolerations[0].key=nvidia.com/gpu',
      'worker.tolerations[0].operator=Exists',
      'worker.tolerations[0].effect=NoSchedule',
      'worker.resources.limits.nvidia\\.com/gpu=1',
      'worker.parallelism=4',
      'worker.backoffLimit=6',
      'services.dataprep.envFromSecret=s3-keys',
      'env.ARGUS_LOG_LEVEL=debug',
    );
    const operator = find(manifests, 'Deployment', 'rel-argus-operator');
    const vars = envOf(operator);
    // The downward API fills ARGUS_POD_NAME in the pod; here it stands for it.
    expect(operator?.spec.template.spec.containers[0].env).toContainEqual({
      name: 'ARGUS_POD_NAME',
      valueFrom: { fieldRef: { fieldPath: 'metadata.name' } },
    });
    vars.ARGUS_POD_NAME = 'rel-argus-operator-7d9f-x2x5q';
    // loadClusterOperatorConfig is what `argus operator` runs: it refuses unknown ARGUS_WORKER_/…_ variables too.
    const config = loadClusterOperatorConfig(vars);
    expect(config.controllers).toMatchObject({
      ingest: { parallelism: 4, backoffLimit: 6 },
      retention: { count: 200, maxAgeSeconds: 604800 },
    });
    expect(config.kubernetes.worker).toEqual({
      image: 'ghcr.io/argus-dev/argus:0.1.0',
      // Empty: the image's entrypoint (argus) runs, given `worker …` as args.
      command: [],
      imagePullPolicy: 'IfNotPresent',
      nodeSelector: { 'nvidia.com/gpu.present': 'true' },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      resources: { limits: { 'nvidia.com/gpu': '1', memory: '4Gi' }, requests: { cpu: '500m', memory: '1Gi' } },
      serviceAccountName: 'rel-argus-ingest-worker',
      // The worker builds dataprep's ingest pipeline, so it reads dataprep's configuration.
      envFrom: [{ configMapRef: { name: 'rel-argus-ingest-worker' } }, { secretRef: { name: 's3-keys' } }],
      ttlSecondsAfterFinished: 3600,
      // The long-running workers keep their own accounts, settings and placement: the ingest GPU pool is not theirs.
      overrides: {
        'camera-watcher': expect.objectContaining({
          serviceAccountName: 'rel-argus-camera-watcher-worker',
          nodeSelector: {},
          tolerations: [],
        }),
        'caption-run': expect.objectContaining({
          serviceAccountName: 'rel-argus-caption-run-worker',
          nodeSelector: {},
          tolerations: [],
        }),
      },
    });
    expect(config.kubernetes.leaderElection).toMatchObject({
      enabled: true,
      leaseName: 'rel-argus-operator',
      identity: 'rel-argus-operator-7d9f-x2x5q',
    });
    expect(config.http.port).toBe(8080);
    expect(config.kubernetes.watchNamespace).toBeUndefined();
  });

  it.each([
    ['every namespace, team-a opted in', ['worker.namespaces={team-a}'], ['argus', 'team-a']],
    ['watchNamespace', ['watchNamespace=team-a'], ['team-a']],
  ])(
    'gives the camera-watcher and caption-run workers their own accounts, settings and placement (ARGUS_WORKER_POD_OVERRIDES, %s)',
    async (_mode, set, namespaces) => {
      const manifests = await template(
        ...set,
        'worker.nodeSelector.pool=ingest',
        'workers.captionRun.nodeSelector.nvidia\\.com/gpu\\.present=true',
        'workers.captionRun.tolerations[0].key=nvidia.com/gpu',
        'workers.captionRun.tolerations[0].operator=Exists',
        'workers.captionRun.tolerations[0].effect=NoSchedule',
        'workers.captionRun.resources.limits.nvidia\\.com/gpu=1',
        'workers.cameraWatcher.serviceAccount.annotations.team=cameras',
        'services.camera-rules.env.CAMERA_RULES_FRIGATE_URL=http://frigate:5000',
        'services.camera-rules.envFromSecret=camera-rules-keys',
        'services.caption-runs.env.MQTT_BROKER=mqtt://mosquitto:1883',
        'services.caption-runs.env.VLM_BASE_URL=http://vllm:8000/v1',
        'services.caption-runs.envFromSecret=vlm-key',
      );
      const vars = envOf(find(manifests, 'Deployment', 'rel-argus-operator'));
      // The JSON parses through what `argus operator` runs (it refuses an unknown worker or field).
      expect(() => JSON.parse(vars.ARGUS_WORKER_POD_OVERRIDES ?? '')).not.toThrow();
      const { worker } = loadClusterOperatorConfig({ ...vars, ARGUS_POD_NAME: 'op' }).kubernetes;
      expect(worker.nodeSelector).toEqual({ pool: 'ingest' });
      expect(worker.overrides).toEqual({
        'camera-watcher': {
          serviceAccountName: 'rel-argus-camera-watcher-worker',
          envFrom: [
            { configMapRef: { name: 'rel-argus-camera-watcher-worker' } },
            { secretRef: { name: 'camera-rules-keys' } },
          ],
          nodeSelector: {},
          tolerations: [],
          resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
        },
        'caption-run': {
          serviceAccountName: 'rel-argus-caption-run-worker',
          envFrom: [{ configMapRef: { name: 'rel-argus-caption-run-worker' } }, { secretRef: { name: 'vlm-key' } }],
          nodeSelector: { 'nvidia.com/gpu.present': 'true' },
          tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
          resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { memory: '2Gi', 'nvidia.com/gpu': '1' } },
        },
      });
      const role = (account: string) =>
        manifests.find((m) => m.kind.endsWith('Role') && m.metadata.name === `rel-argus-${account}`);
      for (const namespace of namespaces) {
        const here = (kind: string, name: string) =>
          manifests.find((m) => m.kind === kind && m.metadata.name === name && m.metadata.namespace === namespace);
        for (const [name, override] of Object.entries(worker.overrides!)) {
          // A pod can only use a ServiceAccount and ConfigMaps of its own namespace: each is there, and bound.
          const account = override.serviceAccountName!;
          expect(here('ServiceAccount', account)).toBeDefined();
          expect(here('RoleBinding', account)).toMatchObject({
            roleRef: { kind: role(account.replace('rel-argus-', ''))?.kind, name: account },
            subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
          });
          const configMap = override.envFrom!.find((source) => 'configMapRef' in source) as {
            configMapRef: { name: string };
          };
          const settings = here('ConfigMap', configMap.configMapRef.name)?.data;
          // Each worker reads its service's settings, through that service's own loader.
          if (name === 'camera-watcher')
            expect(loadCameraRulesConfig(settings).recorder).toMatchObject({
              kind: 'frigate',
              url: 'http://frigate:5000',
            });
          else
            expect(loadCaptionRunsConfig(settings)).toMatchObject({
              mqttBroker: 'mqtt://mosquitto:1883',
              vlm: { baseUrl: 'http://vllm:8000/v1' },
            });
        }
        expect(here('ServiceAccount', 'rel-argus-camera-watcher-worker')?.metadata.annotations).toEqual({
          team: 'cameras',
        });
      }
    },
  );

  it('runs one Deployment and Service per enabled service, listening on the pod IP, in kubernetes mode', async () => {
    const manifests = await template();
    const facts: Record<string, [port: number, health: string]> = {
      dataprep: [6007, '/v1/dataprep/health'],
      'alert-dispatch': [8000, '/api/v1/health'],
      'frame-analysis': [8085, '/api/v1/health'],
      'caption-qa': [4172, '/api/health'],
      'caption-runs': [4173, '/api/health'],
      // Routes at the root (no base path): health is /health, not //health.
      'camera-rules': [8001, '/health'],
    };
    // One row per service of the registry: a new service must be given its facts here.
    expect(Object.keys(facts).sort()).toEqual(Object.keys(SERVICES).sort());
    for (const [service, [port, health]] of Object.entries(facts)) {
      const deployment = find(manifests, 'Deployment', `rel-argus-${service}`);
      const container = deployment?.spec.template.spec.containers[0];
      expect(container.args).toEqual(['serve', service]);
      expect(container.ports).toEqual([{ name: 'http', containerPort: port }]);
      for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe'])
        expect(container[probe].httpGet).toEqual({ path: health, port: 'http' });
      expect(Object.values(envOf(deployment))).toContain('0.0.0.0');
      expect(find(manifests, 'Service', `rel-argus-${service}`)?.spec.ports).toEqual([
        { name: 'http', port, targetPort: 'http' },
      ]);
      expect(find(manifests, 'ConfigMap', `rel-argus-${service}`)?.data.ARGUS_CONTROL_PLANE).toBe('kubernetes');
    }
    // What each service's own config makes of its pod's environment.
    const dataprep = loadDataprepConfig(podEnv(manifests, 'dataprep'));
    expect(dataprep).toMatchObject({ host: '0.0.0.0', port: 6007 });
    expect(dataprep.platform).toMatchObject({ controlPlane: 'kubernetes', namespace: 'argus' });
    const alertDispatch = loadAlertDispatchConfig(podEnv(manifests, 'alert-dispatch'));
    expect(alertDispatch).toMatchObject({ host: '0.0.0.0', port: 8000 });
    expect(alertDispatch.platform).toMatchObject({ controlPlane: 'kubernetes', dataDir: '/var/lib/argus/data' });
    const frameAnalysis = loadFrameAnalysisConfig(podEnv(manifests, 'frame-analysis'));
    expect(frameAnalysis).toMatchObject({ host: '0.0.0.0', port: 8085 });
    expect(frameAnalysis.platform).toMatchObject({ provider: 'cpu' });
    const captionQa = loadCaptionQaConfig(podEnv(manifests, 'caption-qa'));
    expect(captionQa).toMatchObject({ host: '0.0.0.0', port: 4172, dataDir: '/var/lib/argus/data/caption-qa' });
    expect(captionQa.vectors.backend).toBe('lancedb');
    const captionRuns = loadCaptionRunsConfig(podEnv(manifests, 'caption-runs'));
    expect(captionRuns).toMatchObject({ host: '0.0.0.0', port: 4173 });
    expect(captionRuns.platform).toMatchObject({ controlPlane: 'kubernetes', namespace: 'argus' });
    const cameraRules = loadCameraRulesConfig(podEnv(manifests, 'camera-rules'));
    expect(cameraRules).toMatchObject({ host: '0.0.0.0', port: 8001, dataDir: '/var/lib/argus/data/camera-rules' });
    expect(cameraRules.platform).toMatchObject({ controlPlane: 'kubernetes', namespace: 'argus' });

    const without = await template('services.alert-dispatch.enabled=false');
    expect(find(without, 'Deployment', 'rel-argus-alert-dispatch')).toBeUndefined();
    expect(find(without, 'Deployment', 'rel-argus-dataprep')).toBeDefined();
  });

  it('runs exactly the services `argus serve` knows, each by default', async () => {
    const deployments = (await template()).filter((m) => m.kind === 'Deployment');
    const services = deployments
      .map((m) => m.spec.template.spec.containers[0].args ?? [])
      .filter((a) => a[0] === 'serve');
    expect(services.map((a) => a[1]).sort()).toEqual(Object.keys(SERVICES).sort());
  });

  it('lets every service leave its endpoints before it stops: a preStop sleep, then a grace covering the shutdown', async () => {
    const services = (await template()).filter(
      (m) => m.kind === 'Deployment' && m.spec.template.spec.containers[0].args?.[0] === 'serve',
    );
    expect(services).toHaveLength(Object.keys(SERVICES).length);
    for (const deployment of services) {
      const pod = deployment.spec.template.spec;
      expect(pod.containers[0].lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
      // preStop 5 s + the services' 20 s shutdown grace (ARGUS_SHUTDOWN_GRACE_SECONDS) + 5 s to exit.
      expect(pod.terminationGracePeriodSeconds).toBe(30);
    }
    const none = (await template('rollout.preStopSeconds=0')).filter(
      (m) => m.kind === 'Deployment' && m.spec.template.spec.containers[0].args?.[0] === 'serve',
    );
    for (const deployment of none) expect(deployment.spec.template.spec.containers[0].lifecycle).toBeUndefined();
  });

  it('places frame-analysis on a GPU pool from its values: GPU limit, node selector, tolerations, CUDA provider', async () => {
    const manifests = await template(
      'services.frame-analysis.env.ARGUS_ORT_PROVIDER=cuda',
      'services.frame-analysis.env.VLM_BASE_URL=http://vllm:8000/v1',
      'services.frame-analysis.envFromSecret=vlm-key',
      'services.frame-analysis.replicas=3',
      'services.frame-analysis.resources.limits.nvidia\\.com/gpu=1',
      'services.frame-analysis.nodeSelector.nvidia\\.com/gpu\\.present=true',
      'services.frame-analysis.tolerations[0].key=nvidia.com/gpu',
      'services.frame-analysis.tolerations[0].operator=Exists',
      'services.frame-analysis.tolerations[0].effect=NoSchedule',
      'services.frame-analysis.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=gpu-type',
      'services.frame-analysis.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=In',
      'services.frame-analysis.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values={l4}',
    );
    const deployment = find(manifests, 'Deployment', 'rel-argus-frame-analysis');
    const pod = deployment?.spec.template.spec;
    expect(deployment?.spec.replicas).toBe(3);
    // Label values stay strings: a boolean `true` would be refused by the API server.
    expect(pod.nodeSelector).toEqual({ 'nvidia.com/gpu.present': 'true' });
    expect(pod.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    expect(pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'gpu-type', operator: 'In', values: ['l4'] }] },
    ]);
    expect(pod.containers[0].resources).toEqual({
      requests: { cpu: '1', memory: '1Gi' },
      limits: { memory: '3Gi', 'nvidia.com/gpu': '1' },
    });
    expect(pod.containers[0].envFrom).toEqual([
      { configMapRef: { name: 'rel-argus-frame-analysis' } },
      { secretRef: { name: 'vlm-key' } },
    ]);
    const config = loadFrameAnalysisConfig(podEnv(manifests, 'frame-analysis'));
    expect(config.platform.provider).toBe('cuda');
    expect(config.vlm?.baseUrl).toBe('http://vllm:8000/v1');
    // Only frame-analysis moves: the other services stay on CPU nodes.
    const dataprep = find(manifests, 'Deployment', 'rel-argus-dataprep')?.spec.template.spec;
    expect([dataprep.nodeSelector, dataprep.tolerations, dataprep.containers[0].resources.limits]).toEqual([
      undefined,
      undefined,
      { memory: '4Gi' },
    ]);
    expect(loadDataprepConfig(podEnv(manifests, 'dataprep')).platform.provider).toBe('cpu');
  });

  it('configures caption-qa for the cluster from its values: Weaviate vectors, kept frames in S3, the LLM', async () => {
    const manifests = await template(
      'services.caption-qa.env.CAPTION_QA_VECTORDB_BACKEND=weaviate',
      'services.caption-qa.env.CAPTION_QA_WEAVIATE_URL=http://weaviate:8080',
      'services.caption-qa.env.CAPTION_QA_WEAVIATE_GRPC_URL=http://weaviate-grpc:50051',
      'services.caption-qa.env.CAPTION_QA_STORAGE_BACKEND=s3',
      'services.caption-qa.env.CAPTION_QA_S3_ENDPOINT=http://minio:9000',
      'services.caption-qa.env.CAPTION_QA_S3_FORCE_PATH_STYLE=true',
      'services.caption-qa.env.LLM_BASE_URL=http://vllm:8000/v1',
      'services.caption-qa.envFromSecret=caption-qa-keys',
      'env.ARGUS_LOG_LEVEL=debug',
    );
    const configMap = find(manifests, 'ConfigMap', 'rel-argus-caption-qa');
    // Every value a string, as a ConfigMap needs (`true` from --set would be a boolean otherwise).
    expect(configMap?.data).toMatchObject({ CAPTION_QA_S3_FORCE_PATH_STYLE: 'true', ARGUS_LOG_LEVEL: 'debug' });
    const deployment = find(manifests, 'Deployment', 'rel-argus-caption-qa');
    expect(deployment?.spec.template.spec.containers[0].envFrom).toContainEqual({
      secretRef: { name: 'caption-qa-keys' },
    });
    // The keys come from the Secret in the pod; here they stand for it.
    const config = loadCaptionQaConfig({
      ...podEnv(manifests, 'caption-qa'),
      CAPTION_QA_S3_ACCESS_KEY_ID: 'id',
      CAPTION_QA_S3_SECRET_ACCESS_KEY: 'secret',
    });
    expect(config.vectors).toMatchObject({
      backend: 'weaviate',
      url: 'http://weaviate:8080',
      grpcUrl: 'http://weaviate-grpc:50051',
      captionTable: 'CaptionQaCaptions',
      frameTable: 'CaptionQaFrames',
    });
    expect(config.storage).toMatchObject({ backend: 's3', endpoint: 'http://minio:9000', forcePathStyle: true });
    expect(config.llm?.baseUrl).toBe('http://vllm:8000/v1');
    // A changed configuration rolls the pods.
    const before = find(await template(), 'Deployment', 'rel-argus-caption-qa');
    expect(deployment?.spec.template.metadata.annotations['checksum/config']).not.toBe(
      before?.spec.template.metadata.annotations['checksum/config'],
    );
  });

  it("configures camera-rules and caption-runs for the cluster from values.yaml's examples, through their loaders", async () => {
    const manifests = await template(
      'services.camera-rules.env.CAMERA_RULES_FRIGATE_URL=http://frigate:5000',
      'services.camera-rules.env.MQTT_BROKER=mqtt://mosquitto:1883',
      'services.camera-rules.env.CAMERA_RULES_DATAPREP_URL=http://rel-argus-dataprep:6007/v1/dataprep',
      'services.camera-rules.env.CAMERA_RULES_ALERT_DISPATCH_URL=http://rel-argus-alert-dispatch:8000/api/v1',
      'services.camera-rules.env.VLM_BASE_URL=http://vllm:8000/v1',
      'services.camera-rules.envFromSecret=camera-rules-keys',
      'services.caption-runs.env.VLM_BASE_URL=http://vllm:8000/v1',
      'services.caption-runs.env.VLM_MODEL=qwen2.5-vl-7b-instruct',
      'services.caption-runs.env.CAPTION_RUNS_RTSP_ALLOW=10.0.0.0/8\\,cameras.lan',
      'services.caption-runs.envFromSecret=vlm-key',
      'services.caption-runs.credentials.existingSecret=caption-runs-credentials',
    );
    const cameraRules = loadCameraRulesConfig(podEnv(manifests, 'camera-rules'));
    expect(cameraRules.recorder).toMatchObject({
      kind: 'frigate',
      url: 'http://frigate:5000',
      mqttBroker: 'mqtt://mosquitto:1883',
      topicPrefix: 'frigate',
    });
    expect(cameraRules.vlm?.baseUrl).toBe('http://vllm:8000/v1');
    // The URLs of the examples are the chart's own Services, on their ports.
    for (const [url, service] of [
      [cameraRules.dataprepUrl, 'dataprep'],
      [cameraRules.alertDispatchUrl, 'alert-dispatch'],
    ]) {
      const { hostname, port } = new URL(url);
      expect(hostname).toBe(`rel-argus-${service}`);
      expect(find(manifests, 'Service', hostname)?.spec.ports[0].port).toBe(Number(port));
    }
    expect(
      find(manifests, 'Deployment', 'rel-argus-camera-rules')?.spec.template.spec.containers[0].envFrom,
    ).toContainEqual({ secretRef: { name: 'camera-rules-keys' } });
    const captionRuns = loadCaptionRunsConfig(podEnv(manifests, 'caption-runs'));
    expect(captionRuns.vlm).toMatchObject({ baseUrl: 'http://vllm:8000/v1', model: 'qwen2.5-vl-7b-instruct' });
    expect(captionRuns.rtspAllow?.entries).toEqual(['10.0.0.0/8', 'cameras.lan']);
    // The sealing key of the example Secret (its key `key`), as a reference: the loader reads what the Secret holds.
    expect(captionRuns.credentialsKey).toBe(secretValue('caption-runs-credentials', 'key'));
  });

  it('routes each enabled service under its base path, the overlapping ones on hosts of their own', async () => {
    expect((await template()).filter((m) => m.kind === 'Ingress')).toEqual([]);
    const ingress = find(await template(...INGRESS, 'ingress.host=argus.test'), 'Ingress', 'rel-argus');
    expect(routesOf(ingress)).toEqual([
      ['argus.test', '/api/v1', 'Prefix', 'rel-argus-alert-dispatch'],
      ['argus.test', '/v1/dataprep', 'Prefix', 'rel-argus-dataprep'],
      // Routes at the root: the whole host.
      ['camera-rules.argus.example.com', '/', 'Prefix', 'rel-argus-camera-rules'],
      ['caption-qa.argus.example.com', '/api', 'Prefix', 'rel-argus-caption-qa'],
      ['caption-runs.argus.example.com', '/api', 'Prefix', 'rel-argus-caption-runs'],
      ['frame-analysis.argus.example.com', '/api/v1', 'Prefix', 'rel-argus-frame-analysis'],
    ]);
  });

  it('puts every service on a host of its own when each is given one, and no rule on an unused shared host', async () => {
    const manifests = await template(
      ...INGRESS,
      'ingress.className=nginx',
      'ingress.hosts.dataprep=media.test',
      'ingress.hosts.alert-dispatch=alerts.test',
      'ingress.hosts.frame-analysis=poses.test',
      'ingress.hosts.caption-qa=qa.test',
      'ingress.hosts.caption-runs=runs.test',
      'ingress.hosts.camera-rules=rules.test',
      'ingress.tls[0].secretName=argus-tls',
      'ingress.tls[0].hosts={media.test,alerts.test,poses.test,qa.test,runs.test,rules.test}',
    );
    const ingress = find(manifests, 'Ingress', 'rel-argus');
    expect(routesOf(ingress)).toEqual([
      ['alerts.test', '/api/v1', 'Prefix', 'rel-argus-alert-dispatch'],
      ['media.test', '/v1/dataprep', 'Prefix', 'rel-argus-dataprep'],
      ['poses.test', '/api/v1', 'Prefix', 'rel-argus-frame-analysis'],
      ['qa.test', '/api', 'Prefix', 'rel-argus-caption-qa'],
      ['rules.test', '/', 'Prefix', 'rel-argus-camera-rules'],
      ['runs.test', '/api', 'Prefix', 'rel-argus-caption-runs'],
    ]);
    expect(ingress?.spec).toMatchObject({ ingressClassName: 'nginx', tls: [{ secretName: 'argus-tls' }] });
    // Every backend is a Service the chart made, on the port named http.
    for (const rule of ingress?.spec.rules ?? [])
      for (const p of rule.http.paths) {
        expect(find(manifests, 'Service', p.backend.service.name)?.spec.ports[0].name).toBe('http');
        expect(p.backend.service.port).toEqual({ name: 'http' });
      }
    expect(await apiSchemaProblems([ingress as Manifest])).toEqual([]);
  });

  it('lets a service share the host when nothing enabled there overlaps its paths', async () => {
    const ingress = find(
      await template(
        ...INGRESS,
        'ingress.hosts.caption-qa=',
        'services.alert-dispatch.enabled=false',
        'services.frame-analysis.enabled=false',
      ),
      'Ingress',
      'rel-argus',
    );
    expect(routesOf(ingress)).toEqual([
      ['argus.example.com', '/api', 'Prefix', 'rel-argus-caption-qa'],
      ['argus.example.com', '/v1/dataprep', 'Prefix', 'rel-argus-dataprep'],
      ['camera-rules.argus.example.com', '/', 'Prefix', 'rel-argus-camera-rules'],
      ['caption-runs.argus.example.com', '/api', 'Prefix', 'rel-argus-caption-runs'],
    ]);
  });

  it('lets a service at the root have the shared host when it is the only service there', async () => {
    const others = Object.keys(SERVICES).filter((s) => s !== 'camera-rules');
    const ingress = find(
      await template(...INGRESS, 'ingress.hosts.camera-rules=', ...others.map((s) => `services.${s}.enabled=false`)),
      'Ingress',
      'rel-argus',
    );
    expect(routesOf(ingress)).toEqual([['argus.example.com', '/', 'Prefix', 'rel-argus-camera-rules']]);
  });

  it.each([
    [
      'the same base path',
      ['ingress.hosts.frame-analysis='],
      'ingress: alert-dispatch (/api/v1) and frame-analysis (/api/v1) would share paths on host argus.example.com: ' +
        'give one of them a host of its own (ingress.hosts.alert-dispatch or ingress.hosts.frame-analysis)',
    ],
    [
      'one base path inside the other',
      ['ingress.hosts.caption-qa='],
      'ingress: alert-dispatch (/api/v1) and caption-qa (/api) would share paths on host argus.example.com: ' +
        'give one of them a host of its own (ingress.hosts.alert-dispatch or ingress.hosts.caption-qa)',
    ],
    [
      'two services given the same own host',
      ['ingress.hosts.frame-analysis=api.test', 'ingress.hosts.caption-qa=api.test'],
      'ingress: caption-qa (/api) and frame-analysis (/api/v1) would share paths on host api.test: ' +
        'give one of them a host of its own (ingress.hosts.caption-qa or ingress.hosts.frame-analysis)',
    ],
    [
      'two services with the same base path, /api',
      ['ingress.hosts.caption-runs=caption-qa.argus.example.com'],
      'ingress: caption-qa (/api) and caption-runs (/api) would share paths on host caption-qa.argus.example.com: ' +
        'give one of them a host of its own (ingress.hosts.caption-qa or ingress.hosts.caption-runs)',
    ],
    [
      'a service at the root on the shared host',
      ['ingress.hosts.camera-rules='],
      'ingress: alert-dispatch (/api/v1) and camera-rules (/) would share paths on host argus.example.com: ' +
        'give one of them a host of its own (ingress.hosts.alert-dispatch or ingress.hosts.camera-rules)',
    ],
    [
      'a service at the root beside one other service',
      ['ingress.hosts.camera-rules=caption-runs.argus.example.com'],
      'ingress: camera-rules (/) and caption-runs (/api) would share paths on host caption-runs.argus.example.com: ' +
        'give one of them a host of its own (ingress.hosts.camera-rules or ingress.hosts.caption-runs)',
    ],
  ])('refuses two enabled services whose paths overlap on one host (%s), naming them', async (_name, set, message) => {
    await expect(template(...INGRESS, ...set)).rejects.toThrow(message);
  });

  it('refuses an ingress host for a service it does not know, and a service without any host', async () => {
    await expect(template(...INGRESS, 'ingress.hosts.pose-tracker=x.test')).rejects.toThrow(
      `ingress.hosts.pose-tracker: unknown service (known: ${KNOWN_SERVICES})`,
    );
    await expect(template(...INGRESS, 'ingress.host=')).rejects.toThrow(
      'ingress: services.alert-dispatch has no host: set ingress.hosts.alert-dispatch or ingress.host',
    );
  });

  it('refuses a service it does not know, naming it, enabled or not', async () => {
    for (const enabled of ['true', 'false'])
      await expect(template(`services.pose-tracker.enabled=${enabled}`)).rejects.toThrow(
        `services.pose-tracker: unknown service (known: ${KNOWN_SERVICES})`,
      );
  });

  it('ships the rule files npm run chart:rbac generates', async () => {
    const files = rbacRuleFiles();
    expect(files.map((f) => path.basename(f.path)).sort()).toEqual(
      expect.arrayContaining(['ingest-worker.yaml', 'operator.yaml']),
    );
    for (const file of files) expect(await readFile(path.join(repoRoot, file.path), 'utf8')).toBe(file.content);
  });
});
