import { describe, expect, it } from '@jest/globals';
import type { PolicyRule } from '../rbac.js';
import { authorize, serviceAccountIdentities, unusedGrants, type RbacManifest } from './fake-rbac.js';

const JOBS: PolicyRule = { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list'] };
const LEASE: PolicyRule = {
  apiGroups: ['coordination.k8s.io'],
  resources: ['leases'],
  resourceNames: ['argus-operator'],
  verbs: ['get', 'update'],
};
const jobs = (verb: string, namespace?: string, name?: string) => ({
  apiGroup: 'batch',
  resource: 'jobs',
  verb,
  namespace,
  name,
});

describe('the fake RBAC authorizer', () => {
  it('applies a ClusterRoleBinding everywhere, a RoleBinding (to a Role or a ClusterRole) in its namespace only', () => {
    const cluster = { bindings: [{ rules: [JOBS] }] };
    const roleBinding = { bindings: [{ rules: [JOBS], namespace: 'team-a' }] };
    expect(authorize(cluster, jobs('list'))).toBe(true);
    expect(authorize(cluster, jobs('get', 'team-b', 'x'))).toBe(true);
    expect(authorize(roleBinding, jobs('get', 'team-a', 'x'))).toBe(true);
    expect(authorize(roleBinding, jobs('get', 'team-b', 'x'))).toBe(false);
    // A list across namespaces is at the cluster scope, where no RoleBinding applies.
    expect(authorize(roleBinding, jobs('list'))).toBe(false);
    expect(authorize(cluster, jobs('delete', 'team-a', 'x'))).toBe(false);
  });

  it('limits a rule with resourceNames to requests naming one of them (never a create or a list)', () => {
    const identity = [LEASE, { ...LEASE, resourceNames: undefined, verbs: ['create'] }];
    const lease = (verb: string, name?: string) => ({
      apiGroup: 'coordination.k8s.io',
      resource: 'leases',
      verb,
      namespace: 'argus',
      name,
    });
    expect(authorize(identity, lease('update', 'argus-operator'))).toBe(true);
    expect(authorize(identity, lease('update', 'kube-scheduler'))).toBe(false);
    expect(authorize(identity, lease('create'))).toBe(true);
    expect(authorize([LEASE], lease('list'))).toBe(false);
  });

  it('matches subresources exactly, or through */<subresource>', () => {
    const status = { apiGroup: 'argus.dev', resource: 'ingestjobs/status', verb: 'update', namespace: 'a', name: 'j' };
    const rule = (resources: string[]) => [{ apiGroups: ['argus.dev'], resources, verbs: ['update'] }];
    expect(authorize(rule(['ingestjobs']), status)).toBe(false);
    expect(authorize(rule(['ingestjobs/status']), status)).toBe(true);
    expect(authorize(rule(['*/status']), status)).toBe(true);
    expect(authorize(rule(['*']), status)).toBe(true);
  });

  it('names each grant no authorized request used, counting blockOwnerDeletion as an update of the finalizers', () => {
    const identity = {
      bindings: [
        {
          rules: [
            { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'delete'] },
            { apiGroups: ['argus.dev'], resources: ['ingestjobs/finalizers'], verbs: ['update'] },
          ],
        },
        { rules: [LEASE], namespace: 'argus' },
      ],
    };
    const create = {
      method: 'POST',
      user: 'op',
      status: 201,
      attributes: jobs('create', 'media'),
      body: {
        metadata: {
          ownerReferences: [
            { apiVersion: 'argus.dev/v1alpha1', kind: 'IngestJob', name: 'j', blockOwnerDeletion: true },
          ],
        },
      },
    };
    const refusedDelete = { method: 'DELETE', user: 'op', status: 403, attributes: jobs('delete', 'media', 'x') };
    const leaseGet = {
      method: 'GET',
      user: 'op',
      status: 200,
      attributes: {
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        verb: 'get',
        namespace: 'argus',
        name: 'argus-operator',
      },
    };
    expect(unusedGrants(identity, 'op', [create, refusedDelete, leaseGet])).toEqual([
      '(cluster): delete batch/jobs',
      'argus: update coordination.k8s.io/leases [argus-operator]',
    ]);
  });

  it("gives each ServiceAccount the rules of its bindings' roles, where the bindings apply", () => {
    const manifests: RbacManifest[] = [
      { kind: 'ClusterRole', metadata: { name: 'worker' }, rules: [JOBS] },
      { kind: 'Role', metadata: { name: 'lease', namespace: 'argus' }, rules: [LEASE] },
      {
        kind: 'RoleBinding',
        metadata: { name: 'worker', namespace: 'team-a' },
        roleRef: { kind: 'ClusterRole', name: 'worker' },
        subjects: [{ kind: 'ServiceAccount', name: 'w', namespace: 'team-a' }],
      },
      {
        kind: 'RoleBinding',
        metadata: { name: 'lease', namespace: 'argus' },
        roleRef: { kind: 'Role', name: 'lease' },
        subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'argus' }],
      },
    ];
    expect(serviceAccountIdentities(manifests)).toEqual({
      'system:serviceaccount:team-a:w': { bindings: [{ rules: [JOBS], namespace: 'team-a' }] },
      'system:serviceaccount:argus:op': { bindings: [{ rules: [LEASE], namespace: 'argus' }] },
    });
  });
});
