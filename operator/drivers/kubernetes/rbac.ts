import { GROUP } from '../../api/index.js';

/** An RBAC rule (rbac.authorization.k8s.io/v1 PolicyRule), the shape Roles and ClusterRoles list. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  /** The rule covers only objects of these names (never a create or a list: those name no object). */
  resourceNames?: string[];
  verbs: string[];
}

/**
 * What `argus operator` calls in the namespaces it reconciles (a ClusterRole, or a Role in WATCH_NAMESPACE), and
 * nothing more: the IngestJob controller lists and watches IngestJobs (reads come from that cache; a live get only
 * after its own write or a conflict) and deletes finished ones (retention); status goes through the status
 * subresource (PUT); blockOwnerDeletion on the Jobs needs `update` on the owner's finalizers; the Job driver creates,
 * lists and watches Jobs (reads come from that cache) and deletes them. The CameraWatcher and CaptionRun controllers
 * list and watch their kinds, read one before a status write (conflict retry), write status, and the CaptionRun
 * retention deletes finished runs; their long-running workloads are Deployments (create, list, watch, get, delete),
 * owned with blockOwnerDeletion (`update` on the owner's finalizers). No operator code touches CameraRules, writes
 * spec or metadata, or patches, today: add the rules with the code that needs them.
 */
export const OPERATOR_RULES: PolicyRule[] = [
  { apiGroups: [GROUP], resources: ['ingestjobs'], verbs: ['get', 'list', 'watch', 'delete'] },
  { apiGroups: [GROUP], resources: ['ingestjobs/status'], verbs: ['update'] },
  { apiGroups: [GROUP], resources: ['ingestjobs/finalizers'], verbs: ['update'] },
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'get', 'list', 'watch', 'delete'] },
  { apiGroups: [GROUP], resources: ['camerawatchers'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [GROUP], resources: ['captionruns'], verbs: ['get', 'list', 'watch', 'delete'] },
  { apiGroups: [GROUP], resources: ['camerawatchers/status', 'captionruns/status'], verbs: ['update'] },
  { apiGroups: [GROUP], resources: ['camerawatchers/finalizers', 'captionruns/finalizers'], verbs: ['update'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['create', 'get', 'list', 'watch', 'delete'] },
  // Why workers wait: the Job driver watches its pods and reads the FailedCreate Events of a Job without pods.
  { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['list'] },
  // The IngestJob controller's Events; a repeat updates the Event's series.
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'update'] },
];

/**
 * What `argus operator` calls in its own namespace (a Role there, never a ClusterRole: a leases `update` everywhere
 * could take over kube-system's controller Leases): the leader elector reads and renews its one Lease (`resourceNames`)
 * and creates it when missing (a create names no object, so it cannot be limited by name); the new leader records an
 * Event on it.
 */
export function leaderElectionRules(leaseName: string): PolicyRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [leaseName], verbs: ['get', 'update'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
  ];
}

/** What an ingest worker pod (`argus worker ingest`) calls: it reads its IngestJob and writes item results to status. */
export const INGEST_WORKER_RULES: PolicyRule[] = [
  { apiGroups: [GROUP], resources: ['ingestjobs'], verbs: ['get'] },
  { apiGroups: [GROUP], resources: ['ingestjobs/status'], verbs: ['update'] },
];

/**
 * What a camera-watcher worker pod (`argus worker camera-watcher`) calls: cameraWatcherWorker
 * (services/camera-rules/watcher/camera-watcher.ts) reads its CameraWatcher and writes lastEventId, lastEventStart,
 * lastEventTime, eventsHandled and lastRecordingEnd to its status (updateStatusWithRetry: get, then PUT status); the
 * event handler (services/camera-rules/events/event-handler.ts) matches events against a RuleCache
 * (services/camera-rules/rules/rule-cache.ts: list, then watch the CameraRules of its namespace), and RuleBook's
 * claim and result writes (services/camera-rules/rules/rule-book.ts) read a rule and write its status (claims,
 * results).
 */
export const CAMERA_WATCHER_WORKER_RULES: PolicyRule[] = [
  { apiGroups: [GROUP], resources: ['camerawatchers'], verbs: ['get'] },
  { apiGroups: [GROUP], resources: ['camerawatchers/status'], verbs: ['update'] },
  { apiGroups: [GROUP], resources: ['camerarules'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [GROUP], resources: ['camerarules/status'], verbs: ['update'] },
];

/**
 * What a caption-run worker pod (`argus worker caption-run`) calls: captionRunWorker
 * (services/caption-runs/worker/caption-worker.ts) reads its CaptionRun (at start, and at the end whether it was
 * asked to stop) and writes phase and counters to its status (updateStatusWithRetry: get, then PUT status).
 */
export const CAPTION_RUN_WORKER_RULES: PolicyRule[] = [
  { apiGroups: [GROUP], resources: ['captionruns'], verbs: ['get'] },
  { apiGroups: [GROUP], resources: ['captionruns/status'], verbs: ['update'] },
];

/**
 * What dataprep calls when its resources live in the API server (ARGUS_CONTROL_PLANE=kubernetes): it creates an
 * IngestJob per batch, reads it for GET /media/jobs/{id}, and sets spec.cancelRequested for DELETE.
 */
export const DATAPREP_RULES: PolicyRule[] = [
  { apiGroups: [GROUP], resources: ['ingestjobs'], verbs: ['create', 'get', 'update'] },
];

/**
 * What camera-rules calls with ARGUS_CONTROL_PLANE=kubernetes: RuleBook (rules/rule-book.ts) creates, lists, reads
 * and deletes CameraRules; WatcherBook (watchers/watcher-book.ts) reads, updates (spec.enabled, conflict retry) and
 * creates CameraWatchers and lists them for the mapping. CameraRule status (claims, results) is written by the
 * camera-watcher worker's event handler, never by the service.
 */
export const CAMERA_RULES_RULES: PolicyRule[] = [
  { apiGroups: [GROUP], resources: ['camerarules'], verbs: ['create', 'get', 'list', 'delete'] },
  { apiGroups: [GROUP], resources: ['camerawatchers'], verbs: ['create', 'get', 'list', 'update'] },
];

/**
 * What caption-runs calls with ARGUS_CONTROL_PLANE=kubernetes: CaptionRuns (runs/caption-runs.ts) lists runs (also
 * for the duplicate check), creates one per start, reads one by runId and stops it by setting spec.stopRequested
 * (update, conflict retry); it never deletes one (the CaptionRun controller's retention does).
 */
export const CAPTION_RUNS_RULES: PolicyRule[] = [
  { apiGroups: [GROUP], resources: ['captionruns'], verbs: ['create', 'get', 'list', 'update'] },
];

/**
 * Whether `rule` allows `verb` on `resource` (`plural` or `plural/subresource`) of `apiGroup`, for the object `name`
 * (none for create, list, watch): RBAC's matching, where `*` matches all and `*` + `/<sub>` the subresource of all.
 */
export function ruleAllows(rule: PolicyRule, apiGroup: string, resource: string, verb: string, name?: string): boolean {
  const match = (list: string[], value: string) => list.includes('*') || list.includes(value);
  const sub = resource.includes('/') ? `*/${resource.split('/')[1]}` : undefined;
  const names = rule.resourceNames ?? [];
  return (
    match(rule.apiGroups, apiGroup) &&
    (match(rule.resources, resource) || (sub !== undefined && rule.resources.includes(sub))) &&
    match(rule.verbs, verb) &&
    (names.length === 0 || (name !== undefined && names.includes(name)))
  );
}
