import {
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { GROUP, RESOURCES, VERSION, schemaProblems, type KindName, type ResourceKinds } from '../../api/index.js';
import { InvalidError, type NewResource, type ResourceStore, type Watch, type WatchEvent } from '../../ports/index.js';
import { statusCode, toStoreError } from './api-errors.js';
import { LIST_PAGE_SIZE, listAllPages, RestartingInformer, type RestartBackoff } from './informer.js';

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
  /** Objects per list request (`limit`; the rest follows with `continue`). Default LIST_PAGE_SIZE. */
  listPageSize?: number;
}

/** A running watch of the store: its kind and namespace (undefined: all), and the informer whose cache serves reads. */
interface OpenInformer {
  kind: KindName;
  namespace: string | undefined;
  informer: RestartingInformer<Item>;
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
 * the embedded store does), delete with Background propagation, watch on a restarting informer, lists in pages.
 *
 * `get` is served from the cache of a running watch that covers the object (as client-go's informers serve a
 * controller), with one rule for reading one's own writes: after this store wrote an object, its reads go to the API
 * server until the watch has delivered the version the write returned; after a write of it was refused as stale
 * (409), until the watch holds another version than the one sent. Anything else is as fresh as the watch.
 */
export class KubernetesResourceStore implements ResourceStore {
  private readonly api: CustomObjectsApi;
  private readonly informers = new Set<OpenInformer>();
  /** Objects this store wrote, by key, with the version the watch has yet to deliver. */
  private readonly unseenWrites = new Map<string, string>();
  /** The last versions the watch delivered, by key: a write's answer may come after the watch event it caused. */
  private readonly delivered = new Map<string, string[]>();
  /** Objects whose write was refused as stale, by key, with the version that was sent. */
  private readonly staleReads = new Map<string, string>();

  constructor(
    private readonly config: KubeConfig,
    private readonly options: KubernetesResourceStoreOptions = {},
  ) {
    this.api = config.makeApiClient(CustomObjectsApi);
  }

  async get<K extends KindName>(kind: K, namespace: string, name: string): Promise<ResourceKinds[K] | undefined> {
    const key = cacheKey(kind, namespace, name);
    const informer = this.cacheOf(kind, namespace);
    if (informer && !this.unseenWrites.has(key)) {
      const cached = informer.cached(namespace, name);
      const version = cached?.metadata?.resourceVersion;
      if (version === undefined || version !== this.staleReads.get(key)) {
        this.staleReads.delete(key);
        // A copy the caller may change, made of this realm's objects (structuredClone's may come from another realm, under
        // jest the outer one, and isDeepStrictEqual tells their prototypes apart).
        return cached && (JSON.parse(JSON.stringify(cached)) as ResourceKinds[K]);
      }
    }
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
      const created = await this.api.createNamespacedCustomObject({
        ...this.at(kind),
        namespace,
        body: { ...body, apiVersion: `${GROUP}/${VERSION}`, kind },
        fieldValidation: 'Strict',
      });
      return this.written(kind, created);
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
      const written =
        part === 'spec'
          ? await this.api.replaceNamespacedCustomObject(request)
          : await this.api.replaceNamespacedCustomObjectStatus(request);
      return this.written(kind, written);
    } catch (error) {
      const key = cacheKey(kind, namespace, name);
      const sent = object.metadata.resourceVersion;
      if (statusCode(error) === 409 && sent && this.cacheOf(kind, namespace)) this.staleReads.set(key, sent);
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
      // Read-your-writes: reads go to the API server until the watch delivers the deletion.
      if (this.cacheOf(kind, namespace)) this.unseenWrites.set(cacheKey(kind, namespace, name), '');
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
    const emit = (type: WatchEvent<K>['type']) => (object: Item) => {
      this.seen(kind, object, type === 'DELETED');
      handler({ type, object: object as unknown as ResourceKinds[K] });
    };
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
    const open: OpenInformer = { kind, namespace: ns, informer };
    this.informers.add(open);
    await informer.start();
    return {
      stop: async () => {
        this.informers.delete(open);
        await informer.stop();
      },
    };
  }

  /** Whether every open watch has delivered its first list (the operator's readiness). */
  get watchesSynced(): boolean {
    return [...this.informers].every((i) => i.informer.hasSynced);
  }

  /** A listed watch whose cache holds every object of `kind` in `namespace`, if any. */
  private cacheOf(kind: KindName, namespace: string): RestartingInformer<Item> | undefined {
    return [...this.informers].find(
      (i) => i.kind === kind && (i.namespace === undefined || i.namespace === namespace) && i.informer.hasSynced,
    )?.informer;
  }

  /** Notes a write's answer: reads of the object wait for the watch to deliver that version (unless it did). */
  private written<T>(kind: KindName, object: T): T {
    const { namespace, name, resourceVersion } = (object as Item).metadata ?? {};
    if (!namespace || !name || !resourceVersion || !this.cacheOf(kind, namespace)) return object;
    const key = cacheKey(kind, namespace, name);
    if (!this.delivered.get(key)?.includes(resourceVersion)) this.unseenWrites.set(key, resourceVersion);
    return object;
  }

  /** The watch delivered a version: a write it carries is now in the cache. */
  private seen(kind: KindName, object: Item, deleted: boolean): void {
    const key = cacheKey(kind, object.metadata?.namespace ?? '', object.metadata?.name ?? '');
    const version = object.metadata?.resourceVersion ?? '';
    if (deleted) {
      this.staleReads.delete(key);
      this.unseenWrites.delete(key);
      this.delivered.delete(key);
      return;
    }
    // A few versions suffice: a write's answer trails its own watch event by little.
    this.delivered.set(key, [...(this.delivered.get(key) ?? []), version].slice(-RECENT_VERSIONS));
    if (this.unseenWrites.get(key) === version) this.unseenWrites.delete(key);
  }

  private at(kind: KindName) {
    return { group: GROUP, version: VERSION, plural: RESOURCES[kind].plural };
  }

  private listObjects(kind: KindName, namespace: string | undefined): Promise<KubernetesListObject<Item>> {
    return listAllPages(
      (page) =>
        namespace
          ? this.api.listNamespacedCustomObject({ ...this.at(kind), namespace, ...page })
          : this.api.listClusterCustomObject({ ...this.at(kind), ...page }),
      this.options.listPageSize ?? LIST_PAGE_SIZE,
    );
  }
}

/** How many delivered versions of an object are remembered to match a write's answer against. */
const RECENT_VERSIONS = 4;

function cacheKey(kind: KindName, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}
