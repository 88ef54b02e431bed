import { describe, expect, it } from '@jest/globals';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

// @kubernetes/client-node 1.x ships as ESM only: this suite proves the jest setup (native ESM through ts-jest)
// loads it, ahead of the operator that will depend on it.
describe('ESM-only dependencies under jest', () => {
  it('loads @kubernetes/client-node and parses a kubeconfig', () => {
    const kc = new KubeConfig();
    kc.loadFromString(`
apiVersion: v1
kind: Config
clusters: [{ name: local, cluster: { server: 'https://127.0.0.1:6443' } }]
users: [{ name: dev, user: { token: abc } }]
contexts: [{ name: dev@local, context: { cluster: local, user: dev, namespace: argus } }]
current-context: dev@local
`);
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('argus');
    expect(kc.makeApiClient(CoreV1Api)).toBeInstanceOf(CoreV1Api);
  });
});
