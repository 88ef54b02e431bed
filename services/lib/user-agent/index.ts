/**
 * The User-Agent every Argus component sends on its outbound requests (the Kubernetes API, object storage, vector
 * databases, webhooks): `argus-<component>/<version>`, so an API server's audit log or a proxy's access log names the
 * caller instead of a library's default (`node-fetch`, `aws-sdk-js`).
 */
import { createRequire } from 'node:module';

// The repository's package.json: the image runs from the repository root, so it is there in a pod too.
const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

/** `argus-<component>/<version>`, e.g. `argus-operator/0.1.0`. */
export function userAgent(component: string): string {
  return `argus-${component}/${version}`;
}
