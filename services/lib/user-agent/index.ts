/**
 * The User-Agent every Argus component sends on its outbound requests (the Kubernetes API, object storage, vector
 * databases, webhooks, language models): `argus-<component>/<version>`, so an API server's audit log or a proxy's
 * access log names the caller instead of a library's default (`node-fetch`, `aws-sdk-js`, `undici`).
 */
import { createRequire } from 'node:module';

// The repository's package.json: the image runs from the repository root, so it is there in a pod too.
const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

/** `argus-<component>/<version>`, e.g. `argus-operator/0.1.0`. */
export function userAgent(component: string): string {
  return `argus-${component}/${version}`;
}

/** What this process runs, set once by the command line; libraries name the process by it. */
let processComponent: string | undefined;

/**
 * Names the component this process runs (`argus serve dataprep`: `dataprep`; `argus up`: `up`; `operator`, `worker`),
 * once at start, before any client is made: the shared clients (S3, Weaviate, outbound requests, the LLM client)
 * send processUserAgent().
 */
export function setProcessComponent(component: string): void {
  processComponent = component;
}

/** The User-Agent of this process's requests: `argus-<component>/<version>`, or `argus/<version>` before it is named. */
export function processUserAgent(): string {
  return processComponent ? userAgent(processComponent) : `argus/${version}`;
}
