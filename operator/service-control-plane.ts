import client from 'prom-client';
import type { ControllerSettings } from './controllers/index.js';
import { openEmbeddedControlPlane, type ControlPlaneHandle } from './embedded-control-plane.js';
import type { Logger } from '../services/lib/log/index.js';
import { processUserAgent } from '../services/lib/user-agent/index.js';

/** Where a process's control plane lives (ARGUS_CONTROL_PLANE) and the namespace its services use. */
export interface ServiceControlPlaneOptions {
  mode: 'embedded' | 'kubernetes';
  namespace: string;
  dataDir: string;
  logger: Logger;
  config: ControllerSettings;
}

/**
 * The control plane of a process that runs services. Embedded: the store under the data dir, in-process workloads
 * and the controllers. Kubernetes: the API server's resources (in-cluster config in a pod, KUBECONFIG otherwise);
 * workers run in Job pods and the operator runs the controllers, so registering a worker and starting controllers
 * do nothing here.
 */
export async function openServiceControlPlane(options: ServiceControlPlaneOptions): Promise<ControlPlaneHandle> {
  if (options.mode === 'embedded') return openEmbeddedControlPlane(options);
  // Loaded only here: an embedded process never pays for the Kubernetes client.
  const { loadKubeConfig } = await import('./drivers/kubernetes/kubeconfig.js');
  const { KubernetesResourceStore } = await import('./drivers/kubernetes/resource-store.js');
  const resources = new KubernetesResourceStore(loadKubeConfig(undefined, processUserAgent()), {
    watchNamespace: options.namespace,
    onWatchError: (kind, error) =>
      options.logger.warn('resource watch failed; restarting', { kind, error: String(error) }),
  });
  const nothing = async () => undefined;
  return {
    controlPlane: { resources, namespace: options.namespace, registerWorker: () => undefined },
    registry: new client.Registry(),
    startControllers: nothing,
    stopWork: nothing,
    close: nothing,
  };
}
