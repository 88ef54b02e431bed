import type { KindName, ObjectMeta, ResourceKinds } from '../api/index.js';

/** A resource to create: name and namespace given, everything the server sets left out. */
export type NewResource<K extends KindName> = Omit<ResourceKinds[K], 'metadata' | 'status'> & {
  metadata: Pick<ObjectMeta, 'name' | 'namespace' | 'labels' | 'annotations' | 'ownerReferences' | 'finalizers'>;
};

/** A change seen by a watch. `DELETED` carries the object as it was last seen. */
export interface WatchEvent<K extends KindName> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: ResourceKinds[K];
}

/** A running watch; `stop()` ends it and resolves once no more events will be delivered. */
export interface Watch {
  stop(): Promise<void>;
}

/**
 * Typed access to the Argus custom resources, with the semantics of a Kubernetes API server: `update` and
 * `updateStatus` carry the `resourceVersion` that was read and fail with ConflictError when it is stale; `update`
 * ignores status changes and `updateStatus` ignores everything but status; `metadata.generation` moves only when the
 * spec changes. The kubernetes driver serves it from an API server, the embedded driver from a store under the data
 * directory. Controllers and services depend on this port only.
 */
export interface ResourceStore {
  /** The object, or undefined when there is none. */
  get<K extends KindName>(kind: K, namespace: string, name: string): Promise<ResourceKinds[K] | undefined>;
  /** Every object of the kind in `namespace` (all namespaces when undefined). */
  list<K extends KindName>(kind: K, namespace?: string): Promise<ResourceKinds[K][]>;
  /** Creates the object; AlreadyExistsError when the name is taken, InvalidError when the schema refuses it. */
  create<K extends KindName>(kind: K, object: NewResource<K>): Promise<ResourceKinds[K]>;
  /** Replaces metadata (labels, annotations, finalizers, owner references) and spec; status is ignored. */
  update<K extends KindName>(kind: K, object: ResourceKinds[K]): Promise<ResourceKinds[K]>;
  /** Replaces status through the status subresource; everything else is ignored. */
  updateStatus<K extends KindName>(kind: K, object: ResourceKinds[K]): Promise<ResourceKinds[K]>;
  /** Deletes the object (children go with it through owner references); false when it was not there. */
  delete(kind: KindName, namespace: string, name: string): Promise<boolean>;
  /**
   * Delivers an ADDED event for every existing object, then every change, until stopped. A watch that breaks is
   * re-established by the store (relisting where needed); the handler sees each object's latest state.
   */
  watch<K extends KindName>(
    kind: K,
    namespace: string | undefined,
    handler: (event: WatchEvent<K>) => void,
  ): Promise<Watch>;
}
