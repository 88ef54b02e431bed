import { randomUUID } from 'node:crypto';

/** A DNS-1123 label, as Kubernetes object names of a Job's pods must be. */
const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * A new IngestJob name (the `job_id`): `ingest-` and 32 hex digits, 39 characters — under the 52 that leave room
 * for the suffixes Kubernetes adds to a Job's pods.
 */
export function newJobName(): string {
  return `ingest-${randomUUID().replace(/-/g, '')}`;
}

/** True when `name` can be an IngestJob name (anything else is simply an unknown job). */
export function isJobName(name: string): boolean {
  return name.length <= 63 && DNS_1123_LABEL.test(name);
}
