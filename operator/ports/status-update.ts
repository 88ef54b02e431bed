import type { KindName, ResourceKinds } from '../api/index.js';
import { ConflictError } from './errors.js';
import type { ResourceStore } from './resource-store.js';

/** Upper bound of read-modify-write attempts before a conflict is given up. */
const MAX_ATTEMPTS = 20;

/**
 * Read-modify-write of a resource's status with conflict retry: `change` receives the latest object and returns the
 * status to write, or undefined to write nothing. Two writers never lose each other's change. Resolves with the
 * written object, the unchanged latest object, or undefined when the object is gone.
 */
export async function updateStatusWithRetry<K extends KindName>(
  store: ResourceStore,
  kind: K,
  namespace: string,
  name: string,
  change: (latest: ResourceKinds[K]) => ResourceKinds[K]['status'] | undefined,
): Promise<ResourceKinds[K] | undefined> {
  for (let attempt = 1; ; attempt++) {
    const latest = await store.get(kind, namespace, name);
    if (!latest) return undefined;
    const status = change(latest);
    if (status === undefined) return latest;
    try {
      return await store.updateStatus(kind, { ...latest, status } as ResourceKinds[K]);
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}
