/**
 * A Kubernetes API server stand-in for tests: real HTTP on 127.0.0.1, answering like kube-apiserver (and doing the
 * garbage collector's job) for the resources the operator touches, with the rules of
 * `shared/design/KUBERNETES.md` that an easy fake lets slip. It records every request so tests assert what was sent.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { Value } from '@sinclair/typebox/value';
import { API_VERSION, GROUP, RESOURCES, VERSION, schemaProblems, type KindName } from '../../../api/index.js';
import { toCustomResourceDefinition } from '../../../api/crd.js';
import { valueProblems } from '../../../api/crd-validation.js';
import { listPage } from './fake-paging.js';
import { authorize, type FakeIdentity, type RequestAttributes } from './fake-rbac.js';
import {
  COMPLETION_INDEX,
  CONTROLLER_UID,
  syncJob,
  TRACKING_FINALIZER,
  type JobControllerCluster,
} from './job-controller.js';
import { podSecurityViolation } from './pod-security.js';
import { syncDeployment, type DeploymentControllerCluster } from './deployment-controller.js';

/** A kind the fake serves. */
interface ResourceType {
  group: string;
  version: string;
  plural: string;
  kind: string;
  /** Has a status subresource: the main endpoint drops status, /status drops everything else. */
  statusSubresource: boolean;
  /** Tracks metadata.generation (moves on spec changes). */
  generation: boolean;
  /** PUT without metadata.resourceVersion is allowed (false for custom resources). */
  unconditionalUpdate: boolean;
  /** Problems of a new or replaced object (schema, API validation); empty when valid. */
  validate(object: any, old: any | undefined): Problem | undefined;
}

/** A refusal: HTTP status, Status reason and message. */
interface Problem {
  code: number;
  reason: string;
  message: string;
}

/** One request as the fake saw it. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType?: string;
  body?: any;
  user: string;
  /** The User-Agent header. */
  userAgent?: string;
  /** What RBAC judged (set once routed to a resource). */
  attributes?: RequestAttributes;
  /** The status the fake answered (set once answered). */
  status?: number;
  /** The body it answered with (watches: none). */
  response?: any;
}

/** What an interceptor answers instead of the fake: a status and body, or `hang` (never answered). */
export type Interception = { status: number; body?: unknown } | 'hang';

/** An interceptor: an answer, undefined (the fake answers), or a promise of either (the request is held until then). */
export type Interceptor = (req: RecordedRequest) => Interception | undefined | Promise<Interception | undefined>;

/** Users by name: what RBAC lets each do (fake-rbac.ts), or `admin`. Each user's token is `token-<name>`. */
export type FakeUsers = Record<string, FakeIdentity>;

interface StoredEvent {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  typeKey: string;
  namespace: string;
  object: any;
}

interface OpenWatch {
  typeKey: string;
  labelSelector?: string;
  namespace?: string;
  bookmarks: boolean;
  /** Events no longer reach it (a stalled connection). */
  stalled: boolean;
  res: http.ServerResponse;
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const CUSTOM_RESOURCE_PATCH_TYPES = [
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/apply-patch+yaml',
];

/** etcd's default --max-request-bytes: a larger object is refused by storage. */
const ETCD_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;

function customResourceType(kind: KindName): ResourceType {
  const def = RESOURCES[kind];
  const crdSchema = toCustomResourceDefinition(def).spec.versions[0].schema.openAPIV3Schema;
  return {
    group: GROUP,
    version: VERSION,
    plural: def.plural,
    kind,
    statusSubresource: true,
    generation: true,
    unconditionalUpdate: false,
    validate(object) {
      if (object.apiVersion !== API_VERSION || object.kind !== kind) {
        return invalid(`apiVersion/kind must be ${API_VERSION}/${kind}`);
      }
      // Judged by the generated CRD, as a real server judges it, and by the TypeBox source it came from.
      const problems = [
        ...valueProblems(crdSchema.properties!.spec, object.spec, 'spec'),
        ...(object.status === undefined ? [] : valueProblems(crdSchema.properties!.status, object.status, 'status')),
        ...schemaProblems(kind, 'spec', object.spec),
        ...(object.status === undefined ? [] : schemaProblems(kind, 'status', object.status)),
      ];
      if (problems.length) return invalid([...new Set(problems)].join('; '));
      const size = Buffer.byteLength(JSON.stringify(object));
      if (size > ETCD_MAX_REQUEST_BYTES) {
        return {
          code: 413,
          reason: 'RequestEntityTooLarge',
          message: `etcdserver: request is too large (${size} bytes)`,
        };
      }
      return undefined;
    },
  };
}

function invalid(message: string): Problem {
  return { code: 422, reason: 'Invalid', message };
}

function microTimeProblem(object: any, field: string): Problem | undefined {
  const value = object.spec?.[field];
  if (value === undefined || value === null || MICRO_TIME.test(value)) return undefined;
  const fraction = /(\.\d*)?(Z|[+-]\d{2}:\d{2})?$/.exec(String(value))?.[0] ?? '';
  return {
    code: 400,
    reason: 'BadRequest',
    message: `Lease in version "v1" cannot be handled as a Lease: parsing time "${value}" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "${fraction}" as ".000000"`,
  };
}

const LEASES: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  statusSubresource: false,
  generation: false,
  unconditionalUpdate: true,
  validate(object) {
    const problem = microTimeProblem(object, 'acquireTime') ?? microTimeProblem(object, 'renewTime');
    if (problem) return problem;
    const duration = object.spec?.leaseDurationSeconds;
    if (duration !== undefined && !(Number.isInteger(duration) && duration > 0)) {
      return invalid('spec.leaseDurationSeconds: must be greater than 0');
    }
    return undefined;
  },
};

const EVENTS: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  statusSubresource: false,
  generation: false,
  unconditionalUpdate: true,
  validate(event, old) {
    const time = event.eventTime;
    if (typeof time !== 'string' || !MICRO_TIME.test(time)) {
      const fraction = /(\.\d*)?(Z|[+-]\d{2}:\d{2})?$/.exec(String(time))?.[0] ?? '';
      return {
        code: 400,
        reason: 'BadRequest',
        message: `Event in version "v1" cannot be handled as a Event: parsing time "${time}" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "${fraction}" as ".000000"`,
      };
    }
    const problems = ['reportingController', 'reportingInstance', 'action', 'reason']
      .filter((field) => !event[field])
      .map((field) => `${field}: Required value`);
    if (!['Normal', 'Warning'].includes(event.type)) problems.push('type: Unsupported value');
    if (Buffer.byteLength(event.note ?? '') > 1024) problems.push('note: Too long: may not be longer than 1024');
    if (!event.regarding?.kind || !event.regarding?.name) problems.push('regarding: Required value');
    if (event.series) {
      if (!(event.series.count >= 2)) problems.push('series.count: Invalid value: should be at least 2');
      if (!MICRO_TIME.test(event.series.lastObservedTime ?? ''))
        problems.push('series.lastObservedTime: Required value');
    }
    // An update may move the series only: what the Event says is immutable.
    for (const field of ['regarding', 'reason', 'note', 'type', 'action', 'reportingController', 'eventTime']) {
      if (old && !isDeepStrictEqual(old[field], event[field]))
        problems.push(`${field}: Invalid value: field is immutable`);
    }
    return problems.length ? invalid(problems.join('; ')) : undefined;
  },
};

const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE])?$/;

function jobProblems(job: any, old: any | undefined): string[] {
  const problems: string[] = [];
  const name: string = job.metadata?.name ?? '';
  const spec = job.spec ?? {};
  // The name becomes the batch.kubernetes.io/job-name label value (63 at most).
  if (name.length > 63) problems.push('metadata.name: must be no more than 63 characters');
  if (spec.completionMode === 'Indexed') {
    if (!Number.isInteger(spec.completions)) problems.push('spec.completions: Required value for Indexed Jobs');
    // Indexed pods get the hostname <job>-<index>, a DNS label of 63 at most.
    else if (`${name}-${spec.completions - 1}`.length > 63) {
      problems.push(`metadata.name: pod hostname "${name}-${spec.completions - 1}" must be no more than 63 characters`);
    }
  }
  for (const field of ['parallelism', 'completions', 'backoffLimit', 'ttlSecondsAfterFinished']) {
    if (spec[field] !== undefined && !(Number.isInteger(spec[field]) && spec[field] >= 0)) {
      problems.push(`spec.${field}: must be greater than or equal to 0`);
    }
  }
  const pod = spec.template?.spec ?? {};
  if (!['Never', 'OnFailure'].includes(pod.restartPolicy)) {
    problems.push('spec.template.spec.restartPolicy: Unsupported value: only "OnFailure", "Never" are supported');
  }
  if (!Array.isArray(pod.containers) || pod.containers.length === 0) {
    problems.push('spec.template.spec.containers: Required value');
  }
  for (const [i, c] of (pod.containers ?? []).entries()) {
    if (!c.name || !DNS1123_SUBDOMAIN.test(c.name)) problems.push(`spec.template.spec.containers[${i}].name: invalid`);
    if (!c.image) problems.push(`spec.template.spec.containers[${i}].image: Required value`);
    for (const [part, values] of Object.entries(c.resources ?? {})) {
      for (const [resource, quantity] of Object.entries(values as Record<string, unknown>)) {
        if (typeof quantity !== 'string' || !QUANTITY.test(quantity)) {
          problems.push(`spec.template.spec.containers[${i}].resources.${part}[${resource}]: quantities must match`);
        }
      }
    }
  }
  for (const [key, value] of Object.entries(pod.nodeSelector ?? {})) {
    if (typeof value !== 'string') problems.push(`spec.template.spec.nodeSelector[${key}]: must be a string`);
  }
  if (old && !isDeepStrictEqual(old.spec?.template, spec.template)) {
    problems.push('spec.template: Invalid value: field is immutable');
  }
  return problems;
}

const JOBS: ResourceType = {
  group: 'batch',
  version: 'v1',
  plural: 'jobs',
  kind: 'Job',
  statusSubresource: true,
  generation: true,
  unconditionalUpdate: true,
  validate(object, old) {
    const problems = jobProblems(object, old);
    return problems.length ? invalid(problems.join('; ')) : undefined;
  },
};

/** apps/v1 Deployment validation: a selector matching the template, restartPolicy Always, the selector immutable. */
function deploymentProblems(deployment: any, old: any | undefined): string[] {
  const problems: string[] = [];
  const spec = deployment.spec ?? {};
  const selector: Record<string, string> = spec.selector?.matchLabels ?? {};
  const labels: Record<string, string> = spec.template?.metadata?.labels ?? {};
  if (!Object.keys(selector).length) problems.push('spec.selector: Required value');
  if (Object.entries(selector).some(([k, v]) => labels[k] !== v)) {
    problems.push('spec.template.metadata.labels: Invalid value: `selector` does not match template `labels`');
  }
  if (spec.replicas !== undefined && !(Number.isInteger(spec.replicas) && spec.replicas >= 0)) {
    problems.push('spec.replicas: must be greater than or equal to 0');
  }
  if ((spec.template?.spec?.restartPolicy ?? 'Always') !== 'Always') {
    problems.push('spec.template.spec.restartPolicy: Unsupported value: only "Always" is supported');
  }
  if (!Array.isArray(spec.template?.spec?.containers) || spec.template.spec.containers.length === 0) {
    problems.push('spec.template.spec.containers: Required value');
  }
  if (old && !isDeepStrictEqual(old.spec?.selector, spec.selector)) {
    problems.push('spec.selector: Invalid value: field is immutable');
  }
  return problems;
}

const DEPLOYMENTS: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
  statusSubresource: true,
  generation: true,
  unconditionalUpdate: true,
  validate(object, old) {
    const problems = deploymentProblems(object, old);
    return problems.length ? invalid(problems.join('; ')) : undefined;
  },
};

const REPLICASETS: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'replicasets',
  kind: 'ReplicaSet',
  statusSubresource: true,
  generation: true,
  unconditionalUpdate: true,
  validate: () => undefined,
};

/** The labels the API server adds to a Job's pod template and selects its pods by (manualSelector unset). */
function defaultJobSelector(job: any): void {
  const labels = {
    [CONTROLLER_UID]: job.metadata.uid,
    'batch.kubernetes.io/job-name': job.metadata.name,
    'controller-uid': job.metadata.uid,
    'job-name': job.metadata.name,
  };
  job.spec.selector = { matchLabels: { [CONTROLLER_UID]: job.metadata.uid } };
  job.spec.template.metadata = {
    ...job.spec.template.metadata,
    labels: { ...job.spec.template.metadata?.labels, ...labels },
  };
  job.spec.suspend ??= false;
}

/** A core/v1 kind the fake stores without rules of its own. */
function coreType(plural: string, kind: string, statusSubresource = false): ResourceType {
  return {
    group: '',
    version: 'v1',
    plural,
    kind,
    statusSubresource,
    generation: false,
    unconditionalUpdate: true,
    validate: () => undefined,
  };
}

const PODS: ResourceType = {
  ...coreType('pods', 'Pod', true),
  validate(pod) {
    const containers = pod.spec?.containers;
    return Array.isArray(containers) && containers.length ? undefined : invalid('spec.containers: Required value');
  },
};
/** core/v1 Events: what the Job controller records (FailedCreate), counted by the event correlator. */
const CORE_EVENTS = coreType('events', 'Event');
/** Namespaces are cluster-scoped: stored under the empty namespace. */
const NAMESPACES = coreType('namespaces', 'Namespace');

/** Field labels a list may select by, per kind (anything else is refused with 400, as the real server does). */
const FIELD_LABELS: Record<string, string[]> = {
  '/events': [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'reason',
    'type',
  ],
  '/pods': ['spec.nodeName', 'status.phase'],
};

const TYPES: ResourceType[] = [
  ...(Object.keys(RESOURCES) as KindName[]).map(customResourceType),
  JOBS,
  DEPLOYMENTS,
  REPLICASETS,
  LEASES,
  EVENTS,
  PODS,
  CORE_EVENTS,
  NAMESPACES,
  coreType('serviceaccounts', 'ServiceAccount'),
  coreType('configmaps', 'ConfigMap'),
  coreType('secrets', 'Secret'),
];

function typeKey(t: { group: string; plural: string }): string {
  return `${t.group}/${t.plural}`;
}

function status(problem: Problem, details?: Record<string, unknown>) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: problem.message,
    reason: problem.reason,
    details,
    code: problem.code,
  };
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

function rfc3339(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Parses an API path: `/api/v1/...` (core) or `/apis/<group>/<version>/...`. */
function parsePath(pathname: string) {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts[1] === 'v1') {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1];
    rest = parts.slice(3);
  } else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource] = rest;
  if (!plural || rest.length > 3) return undefined;
  return { group, version: parts[0] === 'api' ? 'v1' : parts[2], namespace, plural, name, subresource };
}

/** A fake kube-apiserver on 127.0.0.1 (port 0). */
export class FakeApiServer {
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  /** Objects the garbage collector removed because their owner was missing (wrong uid or namespace). */
  readonly collected: string[] = [];
  /** Jobs deleted without a propagationPolicy: their pods would be orphaned. */
  readonly orphanedPods: string[] = [];

  private readonly objects = new Map<string, any>();
  private readonly history: StoredEvent[] = [];
  private readonly watches = new Set<OpenWatch>();
  private readonly interceptors: Interceptor[] = [];
  private readonly events = new EventEmitter();
  /** Jobs the Job controller model still has to sync, and whether it is syncing now. */
  private readonly jobSyncs = new Set<string>();
  private syncingJobs = false;
  /** Deployments the Deployment controller model still has to sync, and whether it is syncing now. */
  private readonly deploymentSyncs = new Set<string>();
  private syncingDeployments = false;
  /** Deployments whose progress deadline the test said has passed. */
  private readonly deadlines = new Set<string>();
  private rv = 1000;
  /** Watches from a resourceVersion below this get 410 Gone. */
  private compactedBelow = 0;

  private constructor(
    private readonly server: http.Server,
    private readonly users: FakeUsers,
  ) {}

  /** Starts a fake on 127.0.0.1 with the given users (default: one `admin`). */
  static async start(users: FakeUsers = { admin: 'admin' }): Promise<FakeApiServer> {
    const server = http.createServer();
    const fake = new FakeApiServer(server, users);
    server.on('request', (req, res) => {
      fake.handle(req, res).catch((error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(status({ code: 500, reason: 'InternalError', message: String(error) })));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return fake;
  }

  /** Base URL, e.g. http://127.0.0.1:40123. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A kubeconfig pointing at this fake as `user`. */
  kubeConfig(user = 'admin'): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
      users: [{ name: user, token: `token-${user}` }],
      contexts: [{ name: 'fake', cluster: 'fake', user }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** Answers matching requests itself (fault injection); returns a function removing the interceptor. */
  intercept(interceptor: Interceptor): () => void {
    this.interceptors.push(interceptor);
    return () => this.interceptors.splice(this.interceptors.indexOf(interceptor), 1);
  }

  /** Resolves with the first request (already recorded or to come) that matches and has been answered. */
  async waitForRequest(match: (req: RecordedRequest) => boolean): Promise<RecordedRequest> {
    const seen = this.requests.find((r) => r.status !== undefined && match(r));
    if (seen) return seen;
    return new Promise((resolve) => {
      const listener = (req: RecordedRequest) => {
        if (!match(req)) return;
        this.events.off('answered', listener);
        resolve(req);
      };
      this.events.on('answered', listener);
    });
  }

  /** The stored object, or undefined. */
  get(group: string, plural: string, namespace: string, name: string): any {
    const object = this.objects.get(`${group}/${plural}/${namespace}/${name}`);
    return object && clone(object);
  }

  /** Every stored object of a kind. */
  list(group: string, plural: string): any[] {
    const prefix = `${group}/${plural}/`;
    return [...this.objects.entries()].filter(([k]) => k.startsWith(prefix)).map(([, v]) => clone(v));
  }

  /** Writes an object as another client would (kubectl, the Job controller): server fields set, watchers told. */
  put(group: string, plural: string, object: any): any {
    const type = this.type(group, plural);
    const ns = object.metadata.namespace ?? '';
    const key = `${group}/${plural}/${ns}/${object.metadata.name}`;
    const old = this.objects.get(key);
    const next = clone(object);
    next.metadata = {
      ...next.metadata,
      uid: old?.metadata.uid ?? next.metadata.uid ?? randomUUID(),
      creationTimestamp: old?.metadata.creationTimestamp ?? rfc3339(),
      ...(type.generation ? { generation: old?.metadata.generation ?? 1 } : {}),
    };
    return this.store(type, key, next, old ? 'MODIFIED' : 'ADDED');
  }

  /** The pods of a Job (its controller's uid), by completion index, or of a Deployment (through its ReplicaSets). */
  podsOf(namespace: string, job: string): any[] {
    const deployment = this.objects.get(`apps/deployments/${namespace}/${job}`);
    const owner = this.objects.get(`batch/jobs/${namespace}/${job}`);
    if (!owner && deployment) {
      return this.deploymentCluster
        .replicaSetsOf(deployment)
        .flatMap((rs) => this.deploymentCluster.podsOf(rs))
        .map(clone);
    }
    if (!owner) throw new Error(`no job ${namespace}/${job}`);
    return this.jobPods(owner)
      .map(clone)
      .sort((a, b) => Number(a.metadata.labels?.[COMPLETION_INDEX]) - Number(b.metadata.labels?.[COMPLETION_INDEX]));
  }

  /**
   * The scheduler places the Job's pending pods and the kubelet starts them: each runs and is Ready, unless a
   * ConfigMap or Secret its environment comes from is missing in its namespace; then, as the kubelet does, the pod is
   * scheduled but its container waits with CreateContainerConfigError (`configmap "x" not found`).
   */
  startPods(namespace: string, job: string): void {
    const now = rfc3339();
    this.setPodStatuses(namespace, job, (pod) => {
      const missing = missingConfig(pod, (plural, name) => this.objects.has(`/${plural}/${namespace}/${name}`));
      if (missing) return scheduledWaiting(pod, 'CreateContainerConfigError', missing, now);
      return {
        phase: 'Running',
        startTime: now,
        conditions: podConditions(now, { scheduled: true, ready: true }),
        containerStatuses: pod.spec.containers.map((c: any) => ({
          name: c.name,
          image: c.image,
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: now } },
        })),
      };
    });
  }

  /** The scheduler finds no node for the Job's pending pods: PodScheduled=False, reason Unschedulable. */
  unschedulablePods(namespace: string, job: string, message: string): void {
    const now = rfc3339();
    this.setPodStatuses(namespace, job, () => ({
      phase: 'Pending',
      conditions: [
        { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: now },
      ],
    }));
  }

  /** The kubelet cannot pull the image of the Job's pending pods: containers wait with `reason` (ErrImagePull, …). */
  imagePullFails(namespace: string, job: string, reason: string, message: string): void {
    const now = rfc3339();
    this.setPodStatuses(namespace, job, (pod) => scheduledWaiting(pod, reason, message, now));
  }

  /** The containers of the Job's active pods (or of those with these indexes) exit: Succeeded (0) or Failed (1). */
  finishPods(namespace: string, job: string, phase: 'Succeeded' | 'Failed', indexes?: number[]): void {
    const now = rfc3339();
    this.setPodStatuses(
      namespace,
      job,
      (pod) => ({
        ...pod.status,
        phase,
        conditions: podConditions(now, { scheduled: true, ready: false }),
        containerStatuses: pod.spec.containers.map((c: any) => ({
          name: c.name,
          image: c.image,
          ready: false,
          started: false,
          restartCount: 0,
          state: {
            terminated: {
              exitCode: phase === 'Succeeded' ? 0 : 1,
              reason: phase === 'Succeeded' ? 'Completed' : 'Error',
              finishedAt: now,
            },
          },
        })),
      }),
      indexes,
    );
  }

  /**
   * The kubelet restarts the crashed worker container of the Deployment's (or Job's) running pods: `restartCount`
   * grows, `lastState.terminated` keeps the exit (code 1, reason Error, `message`), the container waits in
   * CrashLoopBackOff and the pod is not Ready.
   */
  crashPods(namespace: string, workload: string, message: string): void {
    const now = rfc3339();
    this.setPodStatuses(namespace, workload, (pod) => ({
      ...pod.status,
      phase: 'Running',
      conditions: podConditions(now, { scheduled: true, ready: false }),
      containerStatuses: pod.spec.containers.map((c: any, i: number) => ({
        name: c.name,
        image: c.image,
        ready: false,
        started: false,
        restartCount: (pod.status?.containerStatuses?.[i]?.restartCount ?? 0) + 1,
        state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off restarting failed container ${c.name}` } },
        lastState: { terminated: { exitCode: 1, reason: 'Error', message, finishedAt: now } },
      })),
    }));
  }

  /** The Deployment made no progress for its progressDeadlineSeconds: the controller says ProgressDeadlineExceeded. */
  progressDeadlinePasses(namespace: string, name: string): void {
    const key = `apps/deployments/${namespace}/${name}`;
    if (!this.objects.has(key)) throw new Error(`no deployment ${namespace}/${name}`);
    this.deadlines.add(key);
    this.wakeDeploymentController(DEPLOYMENTS, this.objects.get(key));
  }

  /** Sets `spec.suspend` of a Job, as `kubectl patch` would; the Job controller then acts on it. */
  suspendJob(namespace: string, name: string, suspend: boolean): void {
    const job = this.get('batch', 'jobs', namespace, name);
    if (!job) throw new Error(`no job ${namespace}/${name}`);
    this.put('batch', 'jobs', { ...job, spec: { ...job.spec, suspend } });
  }

  /** Deletes an object as another client would (cascading to its dependents). */
  remove(group: string, plural: string, namespace: string, name: string): void {
    this.deleteNow(this.type(group, plural), `${group}/${plural}/${namespace}/${name}`);
  }

  /** Open watch streams stop receiving events, as over a stalled connection (see compact()). */
  stallWatches(): void {
    for (const watch of this.watches) watch.stalled = true;
  }

  /** Ends every open watch stream from the server side, as the server's own watch timeout does. */
  closeWatches(): void {
    for (const watch of this.watches) watch.res.end();
    this.watches.clear();
  }

  /**
   * Forgets the event history (etcd compaction): open watches get an ERROR event with code 410 and are closed, as
   * does any later watch from an older resourceVersion.
   */
  compact(): void {
    this.compactedBelow = this.rv + 1;
    this.history.length = 0;
    for (const watch of this.watches) this.gone(watch.res, this.rv);
    this.watches.clear();
  }

  /** Sends a BOOKMARK with the current resourceVersion on every watch that asked for bookmarks. */
  bookmark(): void {
    for (const watch of this.watches) {
      if (!watch.bookmarks) continue;
      const type = this.typeByKey(watch.typeKey);
      this.send(watch.res, {
        type: 'BOOKMARK',
        object: {
          kind: type.kind,
          apiVersion: type.group ? `${type.group}/${type.version}` : type.version,
          metadata: { resourceVersion: String(this.rv) },
        },
      });
    }
  }

  /** Open watch streams. */
  get openWatches(): number {
    return this.watches.size;
  }

  /** Stops the server, ending open connections. */
  async close(): Promise<void> {
    this.closeWatches();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private type(group: string, plural: string): ResourceType {
    return this.typeByKey(`${group}/${plural}`);
  }

  private typeByKey(key: string): ResourceType {
    const type = TYPES.find((t) => typeKey(t) === key);
    if (!type) throw new Error(`the fake does not serve ${key}`);
    return type;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const user = Object.keys(this.users).find((u) => `token-${u}` === token);
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      contentType: req.headers['content-type']?.split(';')[0].trim(),
      user: user ?? '',
      userAgent: req.headers['user-agent'],
      body: raw ? safeJson(raw) : undefined,
    };
    this.requests.push(recorded);
    const answer = (code: number, body: unknown) => {
      recorded.status = code;
      recorded.response = clone(body);
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
      this.events.emit('answered', recorded);
    };
    if (!user) return answer(401, status({ code: 401, reason: 'Unauthorized', message: 'Unauthorized' }));
    for (const interceptor of this.interceptors) {
      const interception = await interceptor(recorded);
      if (interception === 'hang') return;
      if (interception) return answer(interception.status, interception.body ?? {});
    }
    const route = parsePath(url.pathname);
    const type = route && TYPES.find((t) => t.group === route.group && t.plural === route.plural);
    if (!route || !type || route.version !== type.version || (route.subresource && route.subresource !== 'status')) {
      return answer(
        404,
        status({ code: 404, reason: 'NotFound', message: 'the server could not find the requested resource' }),
      );
    }
    const verb = this.verb(recorded.method, route.name, recorded.query.watch === 'true');
    const resource = route.subresource ? `${route.plural}/${route.subresource}` : route.plural;
    const rules = this.users[user];
    recorded.attributes = { apiGroup: route.group, resource, verb, namespace: route.namespace, name: route.name };
    if (!authorize(rules, recorded.attributes)) {
      const where = route.namespace ? ` in the namespace "${route.namespace}"` : ' at the cluster scope';
      return answer(
        403,
        status({
          code: 403,
          reason: 'Forbidden',
          message: `${resource} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${route.group}"${where}`,
        }),
      );
    }
    const result = this.serve(type, route, verb, recorded, rules, res);
    if (result) answer(result.code, result.body);
    else if (verb === 'watch') {
      recorded.status = 200;
      this.events.emit('answered', recorded);
    }
  }

  private verb(method: string, name: string | undefined, watch: boolean): string {
    switch (method) {
      case 'GET':
        return name ? 'get' : watch ? 'watch' : 'list';
      case 'POST':
        return 'create';
      case 'PUT':
        return 'update';
      case 'PATCH':
        return 'patch';
      case 'DELETE':
        return name ? 'delete' : 'deletecollection';
      default:
        return method.toLowerCase();
    }
  }

  private serve(
    type: ResourceType,
    route: NonNullable<ReturnType<typeof parsePath>>,
    verb: string,
    req: RecordedRequest,
    rules: FakeIdentity,
    res: http.ServerResponse,
  ): { code: number; body: unknown } | undefined {
    const ns = route.namespace;
    const key = `${typeKey(type)}/${ns}/${route.name}`;
    const notFound = () => ({
      code: 404,
      body: status(
        { code: 404, reason: 'NotFound', message: `${type.plural}.${type.group} "${route.name}" not found` },
        { name: route.name, group: type.group, kind: type.plural },
      ),
    });
    const fail = (problem: Problem) => ({ code: problem.code, body: status(problem, { name: route.name }) });
    switch (verb) {
      case 'list': {
        const fields = req.query.fieldSelector;
        const allowed = ['metadata.name', 'metadata.namespace', ...(FIELD_LABELS[typeKey(type)] ?? [])];
        const unknown = (fields ? fields.split(',') : []).map((t) => t.split('=')[0]).find((f) => !allowed.includes(f));
        if (unknown) {
          return fail({
            code: 400,
            reason: 'BadRequest',
            message: `"${unknown}" is not a known field selector: only "${allowed.join('", "')}"`,
          });
        }
        const body = this.listBody(type, ns, req.query.labelSelector);
        const items = body.items.filter((o) => selectsFields(fields, o));
        return listPage({ ...body, items }, req.query, this.compactedBelow);
      }
      case 'watch':
        this.openWatch(type, ns, req.query, res);
        return undefined;
      case 'get': {
        const object = this.objects.get(key);
        return object ? { code: 200, body: object } : notFound();
      }
      case 'create': {
        if (!ns) return fail({ code: 405, reason: 'MethodNotAllowed', message: 'namespaced resources only' });
        const body = req.body;
        if (!body || typeof body !== 'object') return fail({ code: 400, reason: 'BadRequest', message: 'no body' });
        if (req.contentType !== 'application/json') {
          return fail({ code: 415, reason: 'UnsupportedMediaType', message: `unsupported ${req.contentType}` });
        }
        const created = this.create(type, ns, body, req.query, rules);
        if ('code' in created) return fail(created);
        return { code: 201, body: created.object };
      }
      case 'update': {
        const old = this.objects.get(key);
        if (!old) return notFound();
        if (req.contentType !== 'application/json') {
          return fail({ code: 415, reason: 'UnsupportedMediaType', message: `unsupported ${req.contentType}` });
        }
        const prepared = this.prepare(type, req.body, ns!, req.query, rules);
        if ('code' in prepared) return fail(prepared);
        const incoming = prepared.object;
        if (incoming.metadata.name !== route.name) {
          return fail({ code: 400, reason: 'BadRequest', message: 'the name of the object does not match the URL' });
        }
        const rv = incoming.metadata.resourceVersion;
        if (!rv && !type.unconditionalUpdate) {
          return fail(invalid('metadata.resourceVersion: Invalid value: 0x0: must be specified for an update'));
        }
        if (
          (rv && rv !== old.metadata.resourceVersion) ||
          (incoming.metadata.uid && incoming.metadata.uid !== old.metadata.uid)
        ) {
          return {
            code: 409,
            body: status(
              {
                code: 409,
                reason: 'Conflict',
                message: `Operation cannot be fulfilled on ${type.plural}.${type.group} "${route.name}": the object has been modified; please apply your changes to the latest version and try again`,
              },
              { name: route.name, group: type.group, kind: type.plural },
            ),
          };
        }
        const next =
          route.subresource === 'status' ? this.statusUpdate(old, incoming) : this.mainUpdate(type, old, incoming);
        const problem = type.validate(next, old);
        if (problem) return fail(problem);
        if (isDeepStrictEqual(next, old)) return { code: 200, body: old };
        if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
          this.deleteNow(type, key);
          return { code: 200, body: next };
        }
        return { code: 200, body: this.store(type, key, next, 'MODIFIED') };
      }
      case 'patch':
        if (type.group === GROUP && !CUSTOM_RESOURCE_PATCH_TYPES.includes(req.contentType ?? '')) {
          return fail({
            code: 415,
            reason: 'UnsupportedMediaType',
            message: `the body of the request was in an unknown format - accepted media types include: ${CUSTOM_RESOURCE_PATCH_TYPES.join(', ')}`,
          });
        }
        return fail({ code: 405, reason: 'MethodNotAllowed', message: 'the fake does not apply patches' });
      case 'delete': {
        const old = this.objects.get(key);
        if (!old) return notFound();
        const policy = req.query.propagationPolicy ?? req.body?.propagationPolicy;
        if (type === JOBS && !policy) this.orphanedPods.push(`${ns}/${route.name}`);
        if ((old.metadata.finalizers ?? []).length > 0) {
          if (old.metadata.deletionTimestamp) return { code: 200, body: old };
          const marked = clone(old);
          marked.metadata.deletionTimestamp = rfc3339();
          return { code: 200, body: this.store(type, key, marked, 'MODIFIED') };
        }
        return { code: 200, body: this.deleteNow(type, key) };
      }
      default:
        return fail({ code: 405, reason: 'MethodNotAllowed', message: `${verb} is not served` });
    }
  }

  /** Creates an object as the create endpoint does (validation, defaults, admission): the stored object or the refusal. */
  private create(
    type: ResourceType,
    ns: string,
    body: any,
    query: Record<string, string>,
    rules: FakeIdentity,
  ): { object: any } | Problem {
    const prepared = this.prepare(type, body, ns, query, rules);
    if ('code' in prepared) return prepared;
    const object = prepared.object;
    const name = object.metadata.name;
    const createKey = `${typeKey(type)}/${ns}/${name}`;
    if (this.objects.has(createKey)) {
      return { code: 409, reason: 'AlreadyExists', message: `${type.plural}.${type.group} "${name}" already exists` };
    }
    if (object.metadata.resourceVersion) return invalid('metadata.resourceVersion: must be empty on create');
    if (type.statusSubresource) delete object.status;
    const problem = type.validate(object, undefined);
    if (problem) return problem;
    object.metadata = {
      ...object.metadata,
      namespace: ns,
      uid: randomUUID(),
      creationTimestamp: rfc3339(),
      ...(type.generation ? { generation: 1 } : {}),
    };
    if (type === JOBS) defaultJobSelector(object);
    if (type === PODS) {
      const refused = this.admitPod(object);
      if (refused) return { code: 403, reason: 'Forbidden', message: refused };
      // A new pod waits for the scheduler: Pending, no conditions (see startPods and its siblings).
      object.status = { phase: 'Pending' };
    }
    const stored = this.store(type, createKey, object, 'ADDED');
    this.collectIfOrphaned(type, createKey, stored);
    return { object: stored };
  }

  /**
   * The admission plugins a pod passes on creation: ServiceAccount (the pod's service account must exist in its
   * namespace; `default` always does, as the service account controller makes it) and PodSecurity (the namespace's
   * enforce label). ConfigMaps and Secrets are not checked here: the kubelet finds them missing (startPods).
   */
  private admitPod(pod: any): string | undefined {
    const ns = pod.metadata.namespace;
    const account = pod.spec?.serviceAccountName ?? 'default';
    if (account !== 'default' && !this.objects.has(`/serviceaccounts/${ns}/${account}`)) {
      return `pods "${pod.metadata.name}" is forbidden: error looking up service account ${ns}/${account}: serviceaccount "${account}" not found`;
    }
    return podSecurityViolation(pod, this.objects.get(`/namespaces//${ns}`)?.metadata.labels);
  }

  /** Strict field validation, namespace and name checks, owner-reference rules: the object or the refusal. */
  private prepare(
    type: ResourceType,
    body: any,
    ns: string,
    query: Record<string, string>,
    rules: FakeIdentity,
  ): { object: any } | Problem {
    const object = clone(body);
    object.metadata ??= {};
    if (object.metadata.namespace && object.metadata.namespace !== ns) {
      return {
        code: 400,
        reason: 'BadRequest',
        message: 'the namespace of the provided object does not match the namespace sent on the request',
      };
    }
    if (!object.metadata.name && object.metadata.generateName) {
      // The API server appends five random characters from this alphabet (names.SimpleNameGenerator).
      const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
      const suffix = Array.from({ length: 5 }, () => alphabet[randomInt(alphabet.length)]).join('');
      object.metadata.name = `${object.metadata.generateName.slice(0, 58)}${suffix}`;
    }
    const name: string = object.metadata.name ?? '';
    if (!name || name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
      return invalid(
        `metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`,
      );
    }
    if (type.group === GROUP) {
      // The CRD's structural schema prunes unknown fields; with fieldValidation=Strict they are an error instead.
      const def = RESOURCES[type.kind as KindName];
      for (const part of ['spec', 'status'] as const) {
        if (object[part] === undefined) continue;
        const pruned = Value.Clean(def[part], clone(object[part]));
        if (!isDeepStrictEqual(pruned, object[part]) && query.fieldValidation === 'Strict') {
          return { code: 400, reason: 'BadRequest', message: `strict decoding error: unknown field in "${part}"` };
        }
        object[part] = pruned;
      }
    }
    const owners: any[] = object.metadata.ownerReferences ?? [];
    for (const [i, owner] of owners.entries()) {
      for (const field of ['apiVersion', 'kind', 'name', 'uid']) {
        if (!owner[field]) return invalid(`metadata.ownerReferences[${i}].${field}: Required value`);
      }
      if (owner.blockOwnerDeletion && rules !== 'admin') {
        const ownerType = TYPES.find((t) => `${t.group}/${t.version}` === owner.apiVersion && t.kind === owner.kind);
        const group = ownerType?.group ?? '';
        const finalizers = { apiGroup: group, resource: `${ownerType?.plural}/finalizers`, verb: 'update' };
        if (!ownerType || !authorize(rules, { ...finalizers, namespace: ns, name: owner.name })) {
          return {
            code: 403,
            reason: 'Forbidden',
            message: `${type.plural}.${type.group} "${name}" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on`,
          };
        }
      }
    }
    if (owners.filter((o) => o.controller).length > 1) {
      return invalid('metadata.ownerReferences: Only one reference can have Controller set to true');
    }
    for (const field of ['creationTimestamp', 'deletionTimestamp']) {
      const value = object.metadata[field];
      if (value !== undefined && !RFC3339.test(value)) return invalid(`metadata.${field}: not an RFC 3339 time`);
    }
    return { object };
  }

  /** PUT on the main endpoint: status kept as stored, generation moved when the spec changed. */
  private mainUpdate(type: ResourceType, old: any, incoming: any): any {
    const next = clone(incoming);
    next.metadata = {
      ...incoming.metadata,
      namespace: old.metadata.namespace,
      uid: old.metadata.uid,
      creationTimestamp: old.metadata.creationTimestamp,
      resourceVersion: old.metadata.resourceVersion,
      deletionTimestamp: old.metadata.deletionTimestamp,
    };
    if (next.metadata.deletionTimestamp === undefined) delete next.metadata.deletionTimestamp;
    if (type.generation) {
      next.metadata.generation = old.metadata.generation + (isDeepStrictEqual(old.spec, next.spec) ? 0 : 1);
    }
    if (type.statusSubresource) {
      if (old.status === undefined) delete next.status;
      else next.status = clone(old.status);
    }
    return next;
  }

  /** PUT on /status: only status changes. */
  private statusUpdate(old: any, incoming: any): any {
    const next = clone(old);
    if (incoming.status === undefined) delete next.status;
    else next.status = clone(incoming.status);
    return next;
  }

  private store(type: ResourceType, key: string, object: any, event: 'ADDED' | 'MODIFIED'): any {
    object.metadata.resourceVersion = String(++this.rv);
    this.objects.set(key, object);
    this.publish(type, event, object);
    this.wakeJobController(type, object);
    this.wakeDeploymentController(type, object);
    return clone(object);
  }

  /**
   * The Job controller's informers: a Job or one of its pods changed, or a ServiceAccount or Namespace that pod
   * admission depends on (a real controller retries refused pods with back-off; the fake retries at once).
   */
  private wakeJobController(type: ResourceType, object: any): void {
    const ns = object.metadata.namespace;
    if (type === JOBS) this.jobSyncs.add(`batch/jobs/${ns}/${object.metadata.name}`);
    else if (type === PODS) {
      const owner = (object.metadata.ownerReferences ?? []).find((o: any) => o.controller && o.kind === 'Job');
      if (owner) this.jobSyncs.add(`batch/jobs/${ns}/${owner.name}`);
    } else if (type.plural === 'serviceaccounts' || type === NAMESPACES) {
      const where = type === NAMESPACES ? object.metadata.name : ns;
      for (const key of this.objects.keys()) if (key.startsWith(`batch/jobs/${where}/`)) this.jobSyncs.add(key);
    } else return;
    if (this.syncingJobs) return;
    this.syncingJobs = true;
    try {
      for (let round = 0; this.jobSyncs.size > 0; round++) {
        if (round > 1000) throw new Error('the fake Job controller did not settle after 1000 syncs');
        const [key] = this.jobSyncs;
        this.jobSyncs.delete(key);
        const job = this.objects.get(key);
        if (job?.spec?.template) syncJob(this.jobCluster, clone(job), rfc3339());
      }
    } finally {
      this.syncingJobs = false;
    }
  }

  /**
   * The Deployment and ReplicaSet controllers' informers: a Deployment, one of its ReplicaSets or their pods changed,
   * or a ServiceAccount or Namespace that a refused pod needed: the Deployments concerned sync until nothing changes.
   */
  private wakeDeploymentController(type: ResourceType, object: any): void {
    const ns = object.metadata.namespace ?? '';
    const ownerOf = (o: any, kind: string) =>
      (o.metadata.ownerReferences ?? []).find((r: any) => r.controller && r.kind === kind);
    if (type === DEPLOYMENTS) this.deploymentSyncs.add(`apps/deployments/${ns}/${object.metadata.name}`);
    let replicaSet: any;
    if (type === PODS) {
      const owner = ownerOf(object, 'ReplicaSet');
      replicaSet = owner && this.objects.get(`apps/replicasets/${ns}/${owner.name}`);
    } else if (type === REPLICASETS) replicaSet = object;
    const deployment = replicaSet && ownerOf(replicaSet, 'Deployment');
    if (deployment) this.deploymentSyncs.add(`apps/deployments/${ns}/${deployment.name}`);
    if (type.plural === 'serviceaccounts' || type === NAMESPACES) {
      const where = type === NAMESPACES ? object.metadata.name : ns;
      for (const key of this.objects.keys()) {
        if (key.startsWith(`apps/deployments/${where}/`)) this.deploymentSyncs.add(key);
      }
    }
    if (this.syncingDeployments) return;
    this.syncingDeployments = true;
    try {
      for (let round = 0; this.deploymentSyncs.size > 0; round++) {
        if (round > 1000) throw new Error('the fake Deployment controller did not settle after 1000 syncs');
        const [key] = this.deploymentSyncs;
        this.deploymentSyncs.delete(key);
        const stored = this.objects.get(key);
        if (stored?.spec?.template) syncDeployment(this.deploymentCluster, clone(stored), rfc3339());
      }
    } finally {
      this.syncingDeployments = false;
    }
  }

  /** What the Deployment controller model reads and writes, through the same paths (and admission) as clients. */
  private readonly deploymentCluster: DeploymentControllerCluster = {
    replicaSetsOf: (deployment) => this.ownedBy('apps/replicasets', deployment).map(clone),
    podsOf: (replicaSet) => this.ownedBy('/pods', replicaSet).map(clone),
    putReplicaSet: (replicaSet) => {
      const ns = replicaSet.metadata.namespace;
      const key = `apps/replicasets/${ns}/${replicaSet.metadata.name}`;
      const old = this.objects.get(key);
      if (!old) {
        const created = this.create(REPLICASETS, ns, replicaSet, {}, 'admin');
        if ('code' in created) throw new Error(`the fake could not create ReplicaSet ${key}: ${created.message}`);
        return created.object;
      }
      return this.store(REPLICASETS, key, this.mainUpdate(REPLICASETS, old, replicaSet), 'MODIFIED');
    },
    createPod: (namespace, pod) => {
      const created = this.create(PODS, namespace, pod, {}, 'admin');
      return 'code' in created ? { refused: created.message } : { pod: created.object };
    },
    deletePod: (pod) => this.deleteNow(PODS, `/pods/${pod.metadata.namespace}/${pod.metadata.name}`),
    writeReplicaSetStatus: (replicaSet, next) => this.writeStatusOf(REPLICASETS, replicaSet, next),
    writeDeploymentStatus: (deployment, next) => this.writeStatusOf(DEPLOYMENTS, deployment, next),
    deadlinePassed: (deployment) =>
      this.deadlines.has(`apps/deployments/${deployment.metadata.namespace}/${deployment.metadata.name}`),
  };

  /** The stored objects under `prefix` (`group/plural`) whose controller is `owner` (by uid), in its namespace. */
  private ownedBy(prefix: string, owner: any): any[] {
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`${prefix}/${owner.metadata.namespace}/`))
      .map(([, o]) => o)
      .filter((o) => (o.metadata.ownerReferences ?? []).some((r: any) => r.controller && r.uid === owner.metadata.uid));
  }

  /** Writes a status as a controller does (no write when nothing changed). */
  private writeStatusOf(type: ResourceType, object: any, next: any): void {
    const key = `${typeKey(type)}/${object.metadata.namespace}/${object.metadata.name}`;
    const stored = this.objects.get(key);
    // Both sides cloned alike (structuredClone's objects may come from another realm than literals).
    if (!stored || isDeepStrictEqual(stored.status, clone(next))) return;
    this.store(type, key, { ...clone(stored), status: clone(next) }, 'MODIFIED');
  }

  /** What the Job controller model reads and writes, through the same paths (and admission) as API clients. */
  private readonly jobCluster: JobControllerCluster = {
    podsOf: (job) => this.jobPods(job).map(clone),
    createPod: (namespace, pod) => {
      const created = this.create(PODS, namespace, pod, {}, 'admin');
      return 'code' in created ? { refused: created.message } : { pod: created.object };
    },
    deletePod: (pod, uncounted) => {
      const key = `/pods/${pod.metadata.namespace}/${pod.metadata.name}`;
      const stored = this.objects.get(key);
      if (!stored) return;
      const next = clone(stored);
      if (uncounted)
        next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f: string) => f !== TRACKING_FINALIZER);
      if (!next.metadata.finalizers?.length) this.deleteNow(PODS, key);
      else if (!next.metadata.deletionTimestamp) {
        next.metadata.deletionTimestamp = rfc3339();
        this.store(PODS, key, next, 'MODIFIED');
      }
    },
    releasePod: (pod) => {
      const key = `/pods/${pod.metadata.namespace}/${pod.metadata.name}`;
      const stored = this.objects.get(key);
      if (!stored) return;
      const next = clone(stored);
      next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f: string) => f !== TRACKING_FINALIZER);
      if (next.metadata.deletionTimestamp && !next.metadata.finalizers.length) this.deleteNow(PODS, key);
      else this.store(PODS, key, next, 'MODIFIED');
    },
    writeStatus: (job, jobStatus) => {
      const key = `batch/jobs/${job.metadata.namespace}/${job.metadata.name}`;
      const stored = this.objects.get(key);
      if (!stored || isDeepStrictEqual(stored.status, jobStatus)) return;
      this.store(JOBS, key, { ...clone(stored), status: clone(jobStatus) }, 'MODIFIED');
    },
    event: (job, eventType, reason, message) => {
      const ns = job.metadata.namespace;
      const now = rfc3339();
      // The event correlator: a repeat of the same event on the same object counts up instead of adding one.
      const same = [...this.objects.entries()].find(
        ([k, e]) =>
          k.startsWith(`/events/${ns}/`) &&
          e.involvedObject.uid === job.metadata.uid &&
          e.reason === reason &&
          e.message === message &&
          e.type === eventType,
      );
      if (same) {
        this.store(
          CORE_EVENTS,
          same[0],
          { ...clone(same[1]), count: same[1].count + 1, lastTimestamp: now },
          'MODIFIED',
        );
        return;
      }
      const name = `${job.metadata.name}.${(BigInt(Date.now()) * 1_000_000n + BigInt(this.rv)).toString(16)}`;
      this.store(
        CORE_EVENTS,
        `/events/${ns}/${name}`,
        {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name, namespace: ns, uid: randomUUID(), creationTimestamp: now },
          involvedObject: {
            apiVersion: 'batch/v1',
            kind: 'Job',
            namespace: ns,
            name: job.metadata.name,
            uid: job.metadata.uid,
            resourceVersion: job.metadata.resourceVersion,
          },
          reason,
          message,
          type: eventType,
          source: { component: 'job-controller' },
          reportingComponent: 'job-controller',
          reportingInstance: '',
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
        'ADDED',
      );
    },
  };

  /** The stored pods whose controller is this Job. */
  private jobPods(job: any): any[] {
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`/pods/${job.metadata.namespace}/`))
      .map(([, pod]) => pod)
      .filter((pod) =>
        (pod.metadata.ownerReferences ?? []).some((o: any) => o.controller && o.uid === job.metadata.uid),
      );
  }

  /** Moves the status of the Job's active pods (or of those with these indexes) as the scheduler or kubelet would. */
  private setPodStatuses(namespace: string, job: string, next: (pod: any) => any, indexes?: number[]): void {
    for (const pod of this.podsOf(namespace, job)) {
      if (pod.metadata.deletionTimestamp || ['Succeeded', 'Failed'].includes(pod.status?.phase)) continue;
      if (indexes && !indexes.includes(Number(pod.metadata.labels?.[COMPLETION_INDEX]))) continue;
      this.store(PODS, `/pods/${namespace}/${pod.metadata.name}`, { ...pod, status: next(pod) }, 'MODIFIED');
    }
  }

  private deleteNow(type: ResourceType, key: string): any {
    const object = this.objects.get(key);
    if (!object) return undefined;
    this.objects.delete(key);
    object.metadata.resourceVersion = String(++this.rv);
    this.publish(type, 'DELETED', object);
    this.wakeJobController(type, object);
    this.wakeDeploymentController(type, object);
    // The garbage collector: dependents go with their owner (Background propagation).
    for (const [childKey, child] of [...this.objects.entries()]) {
      if ((child.metadata.ownerReferences ?? []).some((o: any) => o.uid === object.metadata.uid)) {
        const childType = TYPES.find((t) => childKey.startsWith(`${typeKey(t)}/`))!;
        this.deleteNow(childType, childKey);
      }
    }
    return clone(object);
  }

  /** The garbage collector removes a child whose owner is not in its namespace with that uid. */
  private collectIfOrphaned(type: ResourceType, key: string, object: any): void {
    for (const owner of object.metadata.ownerReferences ?? []) {
      const ownerType = TYPES.find((t) => `${t.group}/${t.version}` === owner.apiVersion && t.kind === owner.kind);
      const found = ownerType && this.objects.get(`${typeKey(ownerType)}/${object.metadata.namespace}/${owner.name}`);
      if (!found || found.metadata.uid !== owner.uid) {
        this.collected.push(key);
        this.deleteNow(type, key);
        return;
      }
    }
  }

  private listBody(type: ResourceType, ns: string | undefined, labelSelector?: string) {
    const prefix = `${typeKey(type)}/${ns === undefined ? '' : `${ns}/`}`;
    const items = [...this.objects.entries()]
      .filter(([k, v]) => k.startsWith(prefix) && selects(labelSelector, v))
      .map(([, v]) => v);
    return {
      apiVersion: type.group ? `${type.group}/${type.version}` : type.version,
      kind: `${type.kind}List`,
      metadata: { resourceVersion: String(this.rv) },
      items,
    };
  }

  private openWatch(
    type: ResourceType,
    ns: string | undefined,
    query: Record<string, string>,
    res: http.ServerResponse,
  ) {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const from = query.resourceVersion ? Number(query.resourceVersion) : undefined;
    if (from !== undefined && from + 1 < this.compactedBelow) {
      this.gone(res, from);
      return;
    }
    const watch: OpenWatch = {
      typeKey: typeKey(type),
      namespace: ns,
      labelSelector: query.labelSelector,
      bookmarks: query.allowWatchBookmarks === 'true',
      stalled: false,
      res,
    };
    if (from === undefined) {
      for (const object of this.listBody(type, ns, query.labelSelector).items)
        this.send(res, { type: 'ADDED', object });
    } else {
      for (const event of this.history) {
        if (event.rv > from && this.matches(watch, event)) this.send(res, { type: event.type, object: event.object });
      }
    }
    this.watches.add(watch);
    res.on('close', () => this.watches.delete(watch));
    const timeout = Number(query.timeoutSeconds);
    if (timeout > 0) {
      const timer = setTimeout(() => {
        this.watches.delete(watch);
        res.end();
      }, timeout * 1000);
      timer.unref();
      res.on('close', () => clearTimeout(timer));
    }
  }

  private gone(res: http.ServerResponse, from: number): void {
    this.send(res, {
      type: 'ERROR',
      object: status({
        code: 410,
        reason: 'Expired',
        message: `too old resource version: ${from} (${this.compactedBelow})`,
      }),
    });
    res.end();
  }

  private matches(watch: OpenWatch, event: StoredEvent): boolean {
    return (
      watch.typeKey === event.typeKey &&
      (watch.namespace === undefined || watch.namespace === event.namespace) &&
      selects(watch.labelSelector, event.object)
    );
  }

  private publish(type: ResourceType, eventType: StoredEvent['type'], object: any): void {
    const event: StoredEvent = {
      rv: Number(object.metadata.resourceVersion),
      type: eventType,
      typeKey: typeKey(type),
      namespace: object.metadata.namespace,
      object: clone(object),
    };
    this.history.push(event);
    for (const watch of this.watches) {
      if (!watch.stalled && this.matches(watch, event))
        this.send(watch.res, { type: event.type, object: event.object });
    }
  }

  private send(res: http.ServerResponse, event: unknown): void {
    if (!res.writableEnded) res.write(`${JSON.stringify(event)}\n`);
  }
}

/** Equality-based label selection (`a=b,c=d`), the form the operator uses. */
function selects(labelSelector: string | undefined, object: any): boolean {
  if (!labelSelector) return true;
  return labelSelector.split(',').every((term) => {
    const [key, value] = term.split('=');
    return object.metadata?.labels?.[key] === value;
  });
}

/** Equality-based field selection (`involvedObject.uid=…,reason=…`). */
function selectsFields(fieldSelector: string | undefined, object: any): boolean {
  if (!fieldSelector) return true;
  return fieldSelector.split(',').every((term) => {
    const [path, value] = term.split('=');
    const actual = path.split('.').reduce((v: any, key) => v?.[key], object);
    return String(actual ?? '') === value;
  });
}

/** Pod conditions as the kubelet reports them: scheduled or not, Ready or not. */
function podConditions(now: string, state: { scheduled: boolean; ready: boolean }) {
  const ready = state.ready ? 'True' : 'False';
  return [
    { type: 'PodScheduled', status: state.scheduled ? 'True' : 'False', lastTransitionTime: now },
    { type: 'Initialized', status: 'True', lastTransitionTime: now },
    { type: 'ContainersReady', status: ready, lastTransitionTime: now },
    { type: 'Ready', status: ready, lastTransitionTime: now },
  ];
}

/** A scheduled pod whose containers wait (the kubelet could not create or pull them). */
function scheduledWaiting(pod: any, reason: string, message: string, now: string) {
  return {
    phase: 'Pending',
    conditions: podConditions(now, { scheduled: true, ready: false }),
    containerStatuses: pod.spec.containers.map((c: any) => ({
      name: c.name,
      image: c.image,
      ready: false,
      started: false,
      restartCount: 0,
      state: { waiting: { reason, message } },
    })),
  };
}

/**
 * What the kubelet reports when a container's environment names a ConfigMap or Secret that does not exist (and is
 * not optional): the API's not-found message, e.g. `configmap "x" not found`; undefined when everything exists.
 */
function missingConfig(pod: any, exists: (plural: string, name: string) => boolean): string | undefined {
  for (const c of pod.spec.containers) {
    const refs = [
      ...(c.envFrom ?? []).map((e: any) => [e.configMapRef, e.secretRef]),
      ...(c.env ?? []).map((e: any) => [e.valueFrom?.configMapKeyRef, e.valueFrom?.secretKeyRef]),
    ];
    for (const [configMap, secret] of refs) {
      if (configMap && !configMap.optional && !exists('configmaps', configMap.name)) {
        return `configmap "${configMap.name}" not found`;
      }
      if (secret && !secret.optional && !exists('secrets', secret.name)) return `secret "${secret.name}" not found`;
    }
  }
  return undefined;
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
