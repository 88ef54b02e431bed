/**
 * RBAC for the fake API server, as kube-apiserver's RBAC authorizer decides it: a request is allowed when a rule of
 * some binding of its user matches it. A ClusterRoleBinding's rules apply in every namespace and at the cluster scope;
 * a RoleBinding's rules (of a Role, or of a ClusterRole it refers to) apply only in the binding's namespace; a rule
 * with `resourceNames` matches only requests naming one of them (never a create, list or watch). Also: which rules a
 * recorded run never used, so a test fails on a grant no code needs.
 */
import { RESOURCES, GROUP, VERSION, type KindName } from '../../../api/index.js';
import { ruleAllows, type PolicyRule } from '../rbac.js';

/** One binding of a user: rules everywhere (no namespace: a ClusterRoleBinding) or in one namespace (a RoleBinding). */
export interface FakeBinding {
  rules: PolicyRule[];
  namespace?: string;
}

/** What a fake user may do: everything, rules everywhere (one cluster-wide binding), or its bindings. */
export type FakeIdentity = 'admin' | PolicyRule[] | { bindings: FakeBinding[] };

/** What RBAC judges of a request: the resource (`plural` or `plural/subresource`), the verb, where, which object. */
export interface RequestAttributes {
  apiGroup: string;
  resource: string;
  verb: string;
  /** Undefined at the cluster scope (a list or watch across namespaces). */
  namespace?: string;
  /** Undefined for create, list and watch. */
  name?: string;
}

function bindingsOf(identity: Exclude<FakeIdentity, 'admin'>): FakeBinding[] {
  return Array.isArray(identity) ? [{ rules: identity }] : identity.bindings;
}

function bindingApplies(binding: FakeBinding, namespace: string | undefined): boolean {
  return binding.namespace === undefined || binding.namespace === namespace;
}

/** Whether `identity` may make the request. */
export function authorize(identity: FakeIdentity, request: RequestAttributes): boolean {
  if (identity === 'admin') return true;
  const { apiGroup, resource, verb, namespace, name } = request;
  return bindingsOf(identity).some(
    (b) => bindingApplies(b, namespace) && b.rules.some((r) => ruleAllows(r, apiGroup, resource, verb, name)),
  );
}

/** A request as the fake recorded it, enough to say what it needed. */
export interface AuthorizedRequest {
  method: string;
  user: string;
  status?: number;
  body?: any;
  attributes?: RequestAttributes;
}

/**
 * What the request needed from RBAC: its own attributes, and `update` on the owner's finalizers for each owner
 * reference with blockOwnerDeletion it wrote (the OwnerReferencesPermissionEnforcement admission check).
 */
function needs(request: AuthorizedRequest): RequestAttributes[] {
  const attributes = request.attributes;
  if (!attributes) return [];
  const owners: any[] = ['create', 'update'].includes(attributes.verb)
    ? (request.body?.metadata?.ownerReferences ?? [])
    : [];
  return [
    attributes,
    ...owners
      .filter((o) => o.blockOwnerDeletion && o.apiVersion === `${GROUP}/${VERSION}` && o.kind in RESOURCES)
      .map((o) => ({
        apiGroup: GROUP,
        resource: `${RESOURCES[o.kind as KindName].plural}/finalizers`,
        verb: 'update',
        namespace: attributes.namespace,
        name: o.name,
      })),
  ];
}

/**
 * Every grant of `identity` that none of `user`'s authorized requests used, one line per binding, rule, group,
 * resource and verb (e.g. `(cluster) delete argus.dev/ingestjobs`, `argus: update coordination.k8s.io/leases
 * [argus-operator]`): a grant the code does not need. Refused (401, 403) and unanswered requests count for nothing.
 */
export function unusedGrants(identity: FakeIdentity, user: string, requests: AuthorizedRequest[]): string[] {
  if (identity === 'admin') return [];
  const used = requests
    .filter((r) => r.user === user && r.status !== undefined && r.status !== 401 && r.status !== 403)
    .flatMap(needs);
  const unused: string[] = [];
  for (const binding of bindingsOf(identity)) {
    for (const rule of binding.rules) {
      for (const apiGroup of rule.apiGroups)
        for (const resource of rule.resources)
          for (const verb of rule.verbs) {
            const atom: PolicyRule = { ...rule, apiGroups: [apiGroup], resources: [resource], verbs: [verb] };
            const exercised = used.some(
              (u) => bindingApplies(binding, u.namespace) && ruleAllows(atom, u.apiGroup, u.resource, u.verb, u.name),
            );
            if (exercised) continue;
            const names = rule.resourceNames?.length ? ` [${rule.resourceNames.join(', ')}]` : '';
            unused.push(`${binding.namespace ?? '(cluster)'}: ${verb} ${apiGroup}/${resource}${names}`);
          }
    }
  }
  return unused;
}

/** A rendered RBAC object of a chart: Role, ClusterRole, RoleBinding or ClusterRoleBinding. */
export interface RbacManifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: PolicyRule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/**
 * The identities a set of rendered RBAC objects gives each ServiceAccount, keyed by the user name the API server
 * sees (`system:serviceaccount:<namespace>:<name>`): what `kubectl auth can-i --as=…` would answer from.
 */
export function serviceAccountIdentities(manifests: RbacManifest[]): Record<string, { bindings: FakeBinding[] }> {
  const role = (kind: string, name: string, namespace?: string) =>
    manifests.find(
      (m) =>
        m.kind === kind && m.metadata.name === name && (kind === 'ClusterRole' || m.metadata.namespace === namespace),
    );
  const identities: Record<string, { bindings: FakeBinding[] }> = {};
  for (const binding of manifests.filter((m) => m.kind === 'RoleBinding' || m.kind === 'ClusterRoleBinding')) {
    const namespace = binding.kind === 'RoleBinding' ? binding.metadata.namespace : undefined;
    const rules = role(binding.roleRef!.kind, binding.roleRef!.name, namespace)?.rules;
    if (!rules)
      throw new Error(`${binding.kind} ${binding.metadata.name} refers to a missing ${binding.roleRef!.kind}`);
    for (const subject of binding.subjects ?? []) {
      if (subject.kind !== 'ServiceAccount') continue;
      const user = `system:serviceaccount:${subject.namespace}:${subject.name}`;
      (identities[user] ??= { bindings: [] }).bindings.push({ rules, namespace });
    }
  }
  return identities;
}
