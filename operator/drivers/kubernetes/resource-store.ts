import {
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { GROUP, RESOURCES, VERSION, schemaProblems, type KindName, type ResourceKinds } from '../../api/index.js';
import { InvalidError, type NewResource, type ResourceStore, type Watch, type WatchEvent } from '../../ports/index.js';
import { statusCode, toStoreError } from './api-errors.js';
import { RestartingInformer, type RestartBackoff } from './informer.js';

/** Options of the kubernetes ResourceStore. */
export interface KubernetesResourceStoreOptions {
  /** Lists and watches without a namespace stay in this one (WATCH_NAMESPACE); all namespaces when undefined. */
  watchNamespace?: string;
  /** Server-side timeout of each watch request (a new one follows from the last resourceVersion). Default 300. */
  watchTimeoutSeconds?: number;
  /** Back-off between restarts of a failed list or watch. Default 200 ms doubling up to 30 s. */
  restartBackoff?: RestartBackoff;
  /** Told of every list or watch failure (the watch restarts by itself). */
  onWatchError?: (kind: KindName, error: unknown) => void;
}

type Item = KubernetesObject;

const DNS1123_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Every problem of what is about to be written, checked against the same schemas the CRDs are generated from: the
 * API server checks again, but it reports an unknown field alone (400) where this lists all problems at once.
 */
function check(
  kind: KindName,
  object: { metadata: { name: string; namespace: string } },
  parts: ('spec' | 'status')[],
): void {
  const { name, namespace } = object.metadata;
  const problems = [
    ...(DNS1123_SUBDOMAIN.test(name ?? '') ? [] : [`metadata.name: "${name}" is not a lowercase RFC 1123 subdomain`]),
    ...(DNS1123_LABEL.test(namespace ?? '')
      ? []
      : [`metadata.namespace: "${namespace}" is not a lowercase RFC 1123 label`]),
    ...parts.flatMap((part) => {
      const value = (object as Record<string, unknown>)[part];
      return value === undefined && part === 'status' ? [] : schemaProblems(kind, part, value);
    }),
  ];
  if (problems.length) throw new InvalidError(`${kind} ${namespace}/${name} is invalid`, problems);
}

/**
 * The ResourceStore port on a Kubernetes API server, through client-node's CustomObjectsApi: replace (PUT) with the
 * resourceVersion read, status through the status subresource, strict field validation (unknown fields refused, as
 * the embedded store does), delete with Background propagation, watch on a restarting informer.
 */
export class KubernetesResourceStore implements ResourceStore {
  private readonly api: CustomObjectsApi;
  private readonly informers = new Set<RestartingInformer<Item>>();

  constructor(
    private readonly config: KubeConfig,
    private readonly options: KubernetesResourceStoreOptions = {},
  ) {
    this.api = config.makeApiClient(CustomObjectsApi);
  }

  async get<K extends KindName>(kind: K, namespace: string, name: string): Promise<ResourceKinds[K] | undefined> {
    try {
      return await this.api.getNamespacedCustomObject({ ...this.at(kind), namespace, name });
    } catch (error) {
      if (statusCode(error) === 404) return undefined;
      throw toStoreError(error, `get ${kind} ${namespace}/${name}`);
    }
  }

  async list<K extends KindName>(kind: K, namespace?: string): Promise<ResourceKinds[K][]> {
    try {
      const list = await this.listObjects(kind, namespace ?? this.options.watchNamespace);
      return list.items as unknown as ResourceKinds[K][];
    } catch (error) {
      throw toStoreError(error, `list ${kind}`);
    }
  }

  async create<K extends KindName>(kind: K, object: NewResource<K>): Promise<ResourceKinds[K]> {
    const { namespace, name } = object.metadata;
    const { status: _ignored, ...body } = object as NewResource<K> & { status?: unknown };
    check(kind, object, ['spec']);
    try {
      return await this.api.createNamespacedCustomObject({
        ...this.at(kind),
        namespace,
        body: { ...body, apiVersion: `${GROUP}/${VERSION}`, kind },
        fieldValidation: 'Strict',
      });
    } catch (error) {
      throw toStoreError(error, `create ${kind} ${namespace}/${name}`);
    }
  }

  update<K extends KindName>(kind: K, object: ResourceKinds[K]): Promise<ResourceKinds[K]> {
    return this.replace(kind, object, 'spec');
  }

  updateStatus<K extends KindName>(kind: K, object: ResourceKinds[K]): Promise<ResourceKinds[K]> {
    return this.replace(kind, object, 'status');
  }

  /** A strict replace (PUT with the resourceVersion read) of the object, or of its status subresource only. */
  private async replace<K extends KindName>(
    kind: K,
    object: ResourceKinds[K],
    part: 'spec' | 'status',
  ): Promise<ResourceKinds[K]> {
    const { namespace, name } = object.metadata;
    check(kind, object, [part]);
    const request = { ...this.at(kind), namespace, name, body: object, fieldValidation: 'Strict' };
    try {
      return part === 'spec'
        ? await this.api.replaceNamespacedCustomObject(request)
        : await this.api.replaceNamespacedCustomObjectStatus(request);
    } catch (error) {
      throw toStoreError(error, `${part === 'spec' ? 'update' : 'update status of'} ${kind} ${namespace}/${name}`);
    }
  }

  async delete(kind: KindName, namespace: string, name: string): Promise<boolean> {
    try {
      await this.api.deleteNamespacedCustomObject({
        ...this.at(kind),
        namespace,
        name,
        propagationPolicy: 'Background',
      });
      return true;
    } catch (error) {
      if (statusCode(error) === 404) return false;
      throw toStoreError(error, `delete ${kind} ${namespace}/${name}`);
    }
  }

  async watch<K extends KindName>(
    kind: K,
    namespace: string | undefined,
    handler: (event: WatchEvent<K>) => void,
  ): Promise<Watch> {
    const ns = namespace ?? this.options.watchNamespace;
    const { plural } = RESOURCES[kind];
    const path = ns
      ? `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(ns)}/${plural}`
      : `/apis/${GROUP}/${VERSION}/${plural}`;
    const emit = (type: WatchEvent<K>['type']) => (object: Item) =>
      handler({ type, object: object as unknown as ResourceKinds[K] });
    const informer = new RestartingInformer<Item>(
      this.config,
      path,
      () => this.listObjects(kind, ns) as Promise<KubernetesListObject<Item>>,
      {
        added: emit('ADDED'),
        modified: emit('MODIFIED'),
        deleted: emit('DELETED'),
        failed: (error) => this.options.onWatchError?.(kind, error),
      },
      {
        timeoutSeconds: this.options.watchTimeoutSeconds ?? 300,
        backoff: this.options.restartBackoff ?? { baseMs: 200, maxMs: 30_000 },
      },
    );
    this.informers.add(informer);
    await informer.start();
    return {
      stop: async () => {
        this.informers.delete(informer);
        await informer.stop();
      },
    };
  }

  /** Whether every open watch has delivered its first list (the operator's readiness). */
  get watchesSynced(): boolean {
    return [...this.informers].every((i) => i.hasSynced);
  }

  private at(kind: KindName) {
    return { group: GROUP, version: VERSION, plural: RESOURCES[kind].plural };
  }

  private async listObjects(kind: KindName, namespace: string | undefined): Promise<KubernetesListObject<Item>> {
    return namespace
      ? await this.api.listNamespacedCustomObject({ ...this.at(kind), namespace })
      : await this.api.listClusterCustomObject({ ...this.at(kind) });
  }
}
