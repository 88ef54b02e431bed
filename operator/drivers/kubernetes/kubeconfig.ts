import { KubeConfig } from '@kubernetes/client-node';

/**
 * The kubeconfig of a process: the file named (KUBECONFIG, read by the caller's config) or client-node's default
 * search — `~/.kube/config`, then the in-cluster service account when running in a pod.
 */
export function loadKubeConfig(file?: string): KubeConfig {
  const config = new KubeConfig();
  if (file) config.loadFromFile(file);
  else config.loadFromDefault();
  if (!config.getCurrentCluster())
    throw new Error('no Kubernetes cluster configured (KUBECONFIG, ~/.kube/config or in-cluster)');
  return config;
}
