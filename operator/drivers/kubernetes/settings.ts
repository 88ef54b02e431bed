import Joi from 'joi';
import { envBoolean } from '../../../services/lib/config/index.js';
import { WRITABLE_DIRS, type WorkerPodOverride, type WorkerPodTemplate } from './job-manifest.js';

const jsonValue = (schema: Joi.Schema) =>
  Joi.any().custom((value: unknown, helpers) => {
    let parsed: unknown;
    try {
      parsed = typeof value === 'string' ? JSON.parse(value) : value;
    } catch {
      return helpers.message({ custom: '{{#label}} must be JSON' });
    }
    const { error, value: valid } = schema.validate(parsed);
    if (error) return helpers.message({ custom: `{{#label}}: ${error.message}` });
    return valid;
  });

const quantities = Joi.object().pattern(
  Joi.string(),
  Joi.string().pattern(/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE])?$/, 'quantity'),
);

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SERVICE_ACCOUNT = Joi.string().pattern(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
const ENV_FROM = Joi.string().pattern(
  /^((configMap|secret):[a-z0-9]([-a-z0-9.]*[a-z0-9])?)(,(configMap|secret):[a-z0-9]([-a-z0-9.]*[a-z0-9])?)*$/,
);
const NODE_SELECTOR = Joi.object().pattern(Joi.string(), Joi.string());
const TOLERATIONS = Joi.array().items(
  Joi.object({
    key: Joi.string(),
    operator: Joi.string().valid('Exists', 'Equal'),
    value: Joi.string().allow(''),
    effect: Joi.string().valid('NoSchedule', 'PreferNoSchedule', 'NoExecute'),
    tolerationSeconds: Joi.number().integer(),
  }),
);
const RESOURCES = Joi.object({ limits: quantities, requests: quantities });
const AFFINITY = Joi.object({
  nodeAffinity: Joi.object().unknown(true),
  podAffinity: Joi.object().unknown(true),
  podAntiAffinity: Joi.object().unknown(true),
});
const NAME = Joi.string().pattern(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
const KEY_ITEMS = Joi.array().items(Joi.object({ key: Joi.string().required(), path: Joi.string().required() }));
/** Variables of a worker container: a value, or one key of a Secret or ConfigMap (what the chart hands on). */
const ENV = Joi.array().items(
  Joi.object({
    name: Joi.string()
      .pattern(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .required(),
    value: Joi.string().allow(''),
    valueFrom: Joi.object({
      secretKeyRef: Joi.object({ name: NAME.required(), key: Joi.string().required(), optional: Joi.boolean() }),
      configMapKeyRef: Joi.object({ name: NAME.required(), key: Joi.string().required(), optional: Joi.boolean() }),
    }).xor('secretKeyRef', 'configMapKeyRef'),
  }).xor('value', 'valueFrom'),
);
/** Extra volumes of a worker pod: a Secret (e.g. the API keys file), a ConfigMap or a PVC (e.g. extra models). */
const VOLUMES = Joi.array().items(
  Joi.object({
    name: Joi.string()
      .pattern(DNS_LABEL)
      .invalid(...WRITABLE_DIRS.map((dir) => dir.name))
      .required(),
    secret: Joi.object({ secretName: NAME.required(), items: KEY_ITEMS, optional: Joi.boolean() }),
    configMap: Joi.object({ name: NAME.required(), items: KEY_ITEMS, optional: Joi.boolean() }),
    persistentVolumeClaim: Joi.object({ claimName: NAME.required(), readOnly: Joi.boolean() }),
  }).xor('secret', 'configMap', 'persistentVolumeClaim'),
);
const VOLUME_MOUNTS = Joi.array().items(
  Joi.object({
    name: Joi.string().required(),
    // Not over the worker's own writable places (a pod with two mounts at one path is refused).
    mountPath: Joi.string()
      .pattern(/^\//)
      .invalid(...WRITABLE_DIRS.map((dir) => dir.mountPath))
      .required(),
    readOnly: Joi.boolean(),
    // Inside the volume: relative, no `..` (the API server refuses the pod otherwise).
    subPath: Joi.string().pattern(/^(?!\/)(?!(.*\/)?\.\.(\/|$))/),
  }),
);

/** Each of an override's volumeMounts names one of its volumes: a mount of no volume makes every pod refused. */
function mountsNameVolumes(
  override: WorkerPodOverride,
  helpers: Joi.CustomHelpers,
): WorkerPodOverride | Joi.ErrorReport {
  const volumes = new Set((override.volumes ?? []).map((volume) => volume.name));
  const unknown = (override.volumeMounts ?? []).find((mount) => !volumes.has(mount.name));
  if (!unknown) return override;
  return helpers.message({ custom: `volumeMounts: ${unknown.name} is none of this worker's volumes` });
}

/** The workers whose pods may be placed apart (`ARGUS_WORKER_POD_OVERRIDES`). */
const WORKER_NAMES = ['ingest', 'camera-watcher', 'caption-run'];

/** One worker's overrides as the variable writes them (envFrom as in ARGUS_WORKER_ENV_FROM). */
interface WorkerPodOverrideEnv extends Pick<
  WorkerPodOverride,
  'image' | 'affinity' | 'env' | 'volumes' | 'volumeMounts'
> {
  nodeSelector?: Record<string, string>;
  tolerations?: Array<Record<string, string | number>>;
  resources?: WorkerPodTemplate['resources'];
  serviceAccountName?: string;
  envFrom?: string;
}

/** `configMap:<name>,secret:<name>` as envFrom entries. */
function envFromList(value: string | undefined): WorkerPodTemplate['envFrom'] {
  return (value ?? '')
    .split(',')
    .filter(Boolean)
    .map((entry) => {
      const [kind, name] = entry.split(':');
      return kind === 'secret' ? { secretRef: { name } } : { configMapRef: { name } };
    });
}

/** The kubernetes driver's settings as `kubernetesEnvSchema` validates them (defaults applied). */
export interface KubernetesEnv {
  KUBECONFIG?: string;
  WATCH_NAMESPACE?: string;
  ARGUS_WORKER_IMAGE: string;
  ARGUS_WORKER_COMMAND: string;
  ARGUS_WORKER_IMAGE_PULL_POLICY?: 'Always' | 'IfNotPresent' | 'Never';
  ARGUS_WORKER_NODE_SELECTOR: Record<string, string>;
  ARGUS_WORKER_TOLERATIONS: Array<Record<string, string | number>>;
  ARGUS_WORKER_RESOURCES: WorkerPodTemplate['resources'];
  ARGUS_WORKER_SERVICE_ACCOUNT?: string;
  ARGUS_WORKER_ENV_FROM?: string;
  ARGUS_WORKER_TTL_SECONDS: number;
  ARGUS_WORKER_POD_OVERRIDES: Record<string, WorkerPodOverrideEnv>;
  ARGUS_LEADER_ELECTION: boolean;
  ARGUS_LEADER_ELECTION_LEASE_NAME: string;
  ARGUS_LEADER_ELECTION_LEASE_DURATION_SECONDS: number;
  ARGUS_LEADER_ELECTION_RENEW_DEADLINE_SECONDS: number;
  ARGUS_LEADER_ELECTION_RETRY_PERIOD_SECONDS: number;
  ARGUS_POD_NAME?: string;
}

/** The kubernetes driver's variables: API server access, watch scope, worker pod placement, leader election. */
export const kubernetesEnvSchema = {
  KUBECONFIG: Joi.string().description('Kubeconfig file (default: in-cluster config in a pod, else ~/.kube/config)'),
  // Empty is all namespaces, as in controller-runtime (a chart or manifest often sets the variable to "").
  WATCH_NAMESPACE: Joi.string()
    .allow('')
    .pattern(DNS_LABEL)
    .max(63)
    .description('Reconcile this namespace only (a Role suffices); all namespaces when unset or empty'),
  ARGUS_WORKER_IMAGE: Joi.string()
    .required()
    .description(
      'Image of the worker pods (the argus image); required, also when the operator runs out of the cluster',
    ),
  ARGUS_WORKER_COMMAND: Joi.string()
    .allow('')
    .default('argus')
    .description(
      'The argus command in the image (space-separated); "worker <name> --job ..." is appended. Empty: the ' +
        "image's entrypoint, given those as args",
    ),
  ARGUS_WORKER_IMAGE_PULL_POLICY: Joi.string().valid('Always', 'IfNotPresent', 'Never'),
  ARGUS_WORKER_NODE_SELECTOR: jsonValue(NODE_SELECTOR)
    .default({})
    .description('JSON object: node labels worker pods need, e.g. {"nvidia.com/gpu.present":"true"}'),
  ARGUS_WORKER_TOLERATIONS: jsonValue(TOLERATIONS)
    .default([])
    .description(
      'JSON array of tolerations, e.g. [{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]',
    ),
  ARGUS_WORKER_RESOURCES: jsonValue(RESOURCES)
    .default({})
    .description('JSON resources of the worker container, e.g. {"limits":{"nvidia.com/gpu":"1"}}'),
  ARGUS_WORKER_SERVICE_ACCOUNT: SERVICE_ACCOUNT.description(
    'ServiceAccount of worker pods (needs INGEST_WORKER_RULES)',
  ),
  ARGUS_WORKER_ENV_FROM: ENV_FROM.description(
    'ConfigMaps/Secrets holding the worker service config: configMap:<name>,secret:<name>',
  ),
  ARGUS_WORKER_TTL_SECONDS: Joi.number()
    .integer()
    .min(0)
    .default(3600)
    .description('Finished worker Jobs are removed this long after they finish'),
  ARGUS_WORKER_POD_OVERRIDES: jsonValue(
    Joi.object().pattern(
      Joi.string().valid(...WORKER_NAMES),
      Joi.object({
        image: Joi.string(),
        nodeSelector: NODE_SELECTOR,
        tolerations: TOLERATIONS,
        affinity: AFFINITY,
        resources: RESOURCES,
        serviceAccountName: SERVICE_ACCOUNT,
        envFrom: ENV_FROM,
        env: ENV,
        volumes: VOLUMES,
        volumeMounts: VOLUME_MOUNTS,
      }).custom(mountsNameVolumes),
    ),
  )
    .default({})
    .description(
      'JSON object by worker name (ingest, camera-watcher, caption-run): image, nodeSelector, tolerations, affinity, ' +
        'resources, serviceAccountName, envFrom ("configMap:<name>,secret:<name>"), env (values or secretKeyRef), ' +
        "volumes (secret, configMap, persistentVolumeClaim) and volumeMounts of that worker's pods instead of the " +
        'defaults',
    ),
  ARGUS_LEADER_ELECTION: envBoolean().default(true).description('Run for leader on a Lease (off: lead at once)'),
  ARGUS_LEADER_ELECTION_LEASE_NAME: Joi.string().pattern(DNS_LABEL).default('argus-operator'),
  ARGUS_LEADER_ELECTION_LEASE_DURATION_SECONDS: Joi.number().min(0.1).default(15),
  ARGUS_LEADER_ELECTION_RENEW_DEADLINE_SECONDS: Joi.number().min(0.05).default(10),
  ARGUS_LEADER_ELECTION_RETRY_PERIOD_SECONDS: Joi.number().min(0.01).default(2),
  ARGUS_POD_NAME: Joi.string().description("This replica's identity in the Lease (downward API; default hostname)"),
  // Partial, not strict: the three JSON-valued variables are parsed by a custom rule that joi's typings cannot follow.
} satisfies Joi.PartialSchemaMap<KubernetesEnv>;

/** Prefixes the kubernetes driver owns: an unknown name under them is a typo, refused at start. */
export const KUBERNETES_ENV_PREFIXES = ['ARGUS_WORKER_', 'ARGUS_LEADER_ELECTION_'];

/** The kubernetes driver's settings after validation. */
export interface KubernetesSettings {
  kubeconfig?: string;
  watchNamespace?: string;
  worker: WorkerPodTemplate;
  leaderElection: {
    enabled: boolean;
    leaseName: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
    identity?: string;
  };
}

/** Maps validated variables onto KubernetesSettings. */
export function toKubernetesSettings(env: KubernetesEnv): KubernetesSettings {
  const envFrom = envFromList(env.ARGUS_WORKER_ENV_FROM);
  const overrides = Object.fromEntries(
    Object.entries(env.ARGUS_WORKER_POD_OVERRIDES).map(([worker, { envFrom: from, ...rest }]) => {
      const override: WorkerPodOverride = { ...rest, ...(from !== undefined ? { envFrom: envFromList(from) } : {}) };
      return [worker, override];
    }),
  );
  return {
    kubeconfig: env.KUBECONFIG,
    watchNamespace: env.WATCH_NAMESPACE || undefined,
    worker: {
      image: env.ARGUS_WORKER_IMAGE,
      command: env.ARGUS_WORKER_COMMAND.split(/\s+/).filter(Boolean),
      imagePullPolicy: env.ARGUS_WORKER_IMAGE_PULL_POLICY,
      nodeSelector: env.ARGUS_WORKER_NODE_SELECTOR,
      tolerations: env.ARGUS_WORKER_TOLERATIONS,
      resources: env.ARGUS_WORKER_RESOURCES,
      serviceAccountName: env.ARGUS_WORKER_SERVICE_ACCOUNT,
      envFrom,
      ttlSecondsAfterFinished: env.ARGUS_WORKER_TTL_SECONDS,
      ...(Object.keys(overrides).length ? { overrides } : {}),
    },
    leaderElection: {
      enabled: env.ARGUS_LEADER_ELECTION,
      leaseName: env.ARGUS_LEADER_ELECTION_LEASE_NAME,
      leaseDurationMs: Math.round(env.ARGUS_LEADER_ELECTION_LEASE_DURATION_SECONDS * 1000),
      renewDeadlineMs: Math.round(env.ARGUS_LEADER_ELECTION_RENEW_DEADLINE_SECONDS * 1000),
      retryPeriodMs: Math.round(env.ARGUS_LEADER_ELECTION_RETRY_PERIOD_SECONDS * 1000),
      identity: env.ARGUS_POD_NAME,
    },
  };
}
