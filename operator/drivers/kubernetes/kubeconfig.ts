import { KubeConfig, type RequestContext } from '@kubernetes/client-node';

/**
 * A KubeConfig whose every request names its caller: client-node sends node-fetch's default User-Agent otherwise.
 * API calls take their headers from applySecurityAuthentication, watches from applyToHTTPSOptions.
 */
class UserAgentKubeConfig extends KubeConfig {
  constructor(private readonly userAgent: string) {
    super();
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    context.setHeaderParam('User-Agent', this.userAgent);
  }

  override async applyToHTTPSOptions(opts: Parameters<KubeConfig['applyToHTTPSOptions']>[0]): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    opts.headers = { ...opts.headers, 'User-Agent': this.userAgent };
  }
}

/**
 * The kubeconfig of a process: the file named (KUBECONFIG, read by the caller's config) or client-node's default
 * search — `~/.kube/config`, then the in-cluster service account when running in a pod. Every request it makes
 * carries `userAgent` (services/lib/user-agent), so the API server's audit log names the component.
 */
export function loadKubeConfig(file: string | undefined, userAgent: string): KubeConfig {
  const config = new UserAgentKubeConfig(userAgent);
  if (file) config.loadFromFile(file);
  else config.loadFromDefault();
  if (!config.getCurrentCluster())
    throw new Error('no Kubernetes cluster configured (KUBECONFIG, ~/.kube/config or in-cluster)');
  return config;
}
