import type { KindName, ResourceKinds } from '../api/index.js';
import { ConflictError } from './errors.js';
import type { ResourceStore } from './resource-store.js';

/** Upper bound of read-modify-write attempts before a conflict is given up. */
const MAX_ATTEMPTS = 20;

/**
 * Read-modify-write of a resource with conflict retry: `change` receives the latest object and returns the object to
 * write, or undefined to write nothing; `write` is the store's `update` (spec, metadata) or `updateStatus`. Two
 * writers never lose each other's change. Resolves with the written object, the unchanged latest object, or undefined
 * when the object is gone.
 */
export async function updateWithRetry<K extends KindName>(
  store: ResourceStore,
  kind: K,
  namespace: string,
  name: string,
  change: (latest: ResourceKinds[K]) => ResourceKinds[K] | undefined,
  write: 'update' | 'updateStatus' = 'update',
): Promise<ResourceKinds[K] | undefined> {
  for (let attempt = 1; ; attempt++) {
    const latest = await store.get(kind, namespace, name);
    if (!latest) return undefined;
    const next = change(latest);
    if (next === undefined) return latest;
    try {
      return await store[write](kind, next);
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/**
 * Read-modify-write of a resource's status with conflict retry (updateWithRetry through the status subresource):
 * `change` receives the latest object and returns the status to write, or undefined to write nothing.
 */
export function updateStatusWithRetry<K extends KindName>(
  store: ResourceStore,
  kind: K,
  namespace: string,
  name: string,
  change: (latest: ResourceKinds[K]) => ResourceKinds[K]['status'] | undefined,
): Promise<ResourceKinds[K] | undefined> {
  return updateWithRetry(
    store,
    kind,
    namespace,
    name,
    (latest) => {
      const status = change(latest);
      return status === undefined ? undefined : ({ ...latest, status } as ResourceKinds[K]);
    },
    'updateStatus',
  );
}
