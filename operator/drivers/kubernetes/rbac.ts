import { GROUP, RESOURCES } from '../../api/index.js';

/** An RBAC rule (rbac.authorization.k8s.io/v1 PolicyRule), the shape Roles and ClusterRoles list. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const PLURALS = Object.values(RESOURCES).map((r) => r.plural);

/**
 * What `argus operator` calls, and nothing more (the fake API server refuses anything else in the driver tests):
 * the controllers get, list and watch the kinds, the IngestJob controller deletes finished jobs (retention); status
 * goes through the status subresource (PUT); blockOwnerDeletion on the Jobs needs `update` on the owner's finalizers;
 * the Job driver creates, reads, watches (to wake the controllers) and deletes Jobs; the leader elector reads, creates
 * and renews its Lease, and the operator records an Event when a replica takes the lead. No controller writes spec
 * or metadata, or patches, today: add the verbs with the code that needs them.
 */
export const OPERATOR_RULES: PolicyRule[] = [
  { apiGroups: [GROUP], resources: PLURALS, verbs: ['get', 'list', 'watch', 'delete'] },
  { apiGroups: [GROUP], resources: PLURALS.map((p) => `${p}/status`), verbs: ['update'] },
  { apiGroups: [GROUP], resources: PLURALS.map((p) => `${p}/finalizers`), verbs: ['update'] },
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'get', 'list', 'watch', 'delete'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
];

/** What an ingest worker pod (`argus worker ingest`) calls: it reads its IngestJob and writes item results to status. */
export const INGEST_WORKER_RULES: PolicyRule[] = [
  { apiGroups: [GROUP], resources: ['ingestjobs'], verbs: ['get'] },
  { apiGroups: [GROUP], resources: ['ingestjobs/status'], verbs: ['update'] },
];

/**
 * What dataprep calls when its resources live in the API server (ARGUS_CONTROL_PLANE=kubernetes): it creates an
 * IngestJob per batch, reads it for GET /media/jobs/{id}, and sets spec.cancelRequested for DELETE.
 */
export const DATAPREP_RULES: PolicyRule[] = [
  { apiGroups: [GROUP], resources: ['ingestjobs'], verbs: ['create', 'get', 'update'] },
];

/** Whether `rules` allow `verb` on `resource` (`plural` or `plural/subresource`) of `apiGroup`; `*` matches all. */
export function allows(rules: PolicyRule[], apiGroup: string, resource: string, verb: string): boolean {
  const match = (list: string[], value: string) => list.includes('*') || list.includes(value);
  return rules.some((r) => match(r.apiGroups, apiGroup) && match(r.resources, resource) && match(r.verbs, verb));
}
