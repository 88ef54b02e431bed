import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { API_VERSION, RESOURCES, schemaProblems } from '../../api/index.js';
import type { AnyResource, KindName, ObjectMeta, ResourceKinds } from '../../api/index.js';
import {
  AlreadyExistsError,
  ConflictError,
  InvalidError,
  NotFoundError,
  type NewResource,
  type ResourceStore,
  type Watch,
  type WatchEvent,
} from '../../ports/index.js';
import { KeyedQueue } from '../../../services/lib/keyed-queue/index.js';
import { isProcessAlive } from '../../../services/lib/process/index.js';
import { removeFileDurably, TEMP_SUFFIX, writeFileAtomic } from './atomic-file.js';

/** Options of the embedded store. */
export interface EmbeddedResourceStoreOptions {
  /** Where resources live: `<dir>/<plural>/<namespace>/<name>.json`. */
  dir: string;
  /** Told about files that could not be loaded and watch handlers that threw (the store goes on). */
  onWarning?: (message: string, detail: Record<string, unknown>) => void;
}

/** Holds the pid of the process serving the directory: two stores on one directory would hand out versions twice. */
const LOCK_FILE = 'lock';
/** The file holding the highest resourceVersion handed out so far (reserved in blocks). */
const VERSION_FILE = 'resource-version';
/** resourceVersions reserved per write of VERSION_FILE, so that most writes cost one fsync'd file, not two. */
const VERSION_BLOCK = 1000;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

interface Subscriber {
  kind: KindName;
  namespace?: string;
  deliver(event: WatchEvent<KindName>): void;
}

/**
 * The Argus resources in one process, persisted under a directory with API-server semantics: uid, monotonically
 * increasing resourceVersion (never reused, also across restarts), generation moved by spec changes only, status
 * subresource, optimistic concurrency, strict schema validation, finalizers, owner-reference cascade and watches.
 *
 * Each object is one JSON file written atomically. Writes to one object are serialised; every change is published
 * (memory, watches, the writer's promise) in resourceVersion order, so a watcher sees a consistent history.
 */
export class EmbeddedResourceStore implements ResourceStore {
  private readonly objects = new Map<string, AnyResource>();
  private readonly writes = new KeyedQueue<string>();
  private readonly subscribers = new Set<Subscriber>();
  /** Changes whose file operation finished, waiting for every lower resourceVersion to be published first. */
  private readonly finished = new Map<number, (() => void) | null>();
  private readonly published = new Map<number, () => void>();
  private lastIssued = 0;
  private lastPublished = 0;
  private reserved = 0;
  private reserving?: Promise<void>;

  private constructor(private readonly options: EmbeddedResourceStoreOptions) {}

  /** Loads every resource under `options.dir` (temp files of interrupted writes are removed) and serves them. */
  static async open(options: EmbeddedResourceStoreOptions): Promise<EmbeddedResourceStore> {
    const store = new EmbeddedResourceStore(options);
    await fs.mkdir(options.dir, { recursive: true });
    await lockDirectory(options.dir);
    try {
      await store.load();
    } catch (error) {
      await fs.rm(path.join(options.dir, LOCK_FILE), { force: true });
      throw error;
    }
    return store;
  }

  async get<K extends KindName>(kind: K, namespace: string, name: string): Promise<ResourceKinds[K] | undefined> {
    const object = this.objects.get(objectKey(kind, namespace, name));
    return object ? (structuredClone(object) as ResourceKinds[K]) : undefined;
  }

  async list<K extends KindName>(kind: K, namespace?: string): Promise<ResourceKinds[K][]> {
    return this.snapshot(kind, namespace).map((o) => structuredClone(o) as ResourceKinds[K]);
  }

  async create<K extends KindName>(kind: K, object: NewResource<K>): Promise<ResourceKinds[K]> {
    const { name, namespace } = object.metadata ?? {};
    const problems = [
      ...identityProblems(kind, object),
      ...nameProblems(name, namespace),
      ...metadataProblems(object.metadata),
      ...schemaProblems(kind, 'spec', object.spec),
    ];
    if (problems.length > 0) throw invalid(kind, name, problems);
    const key = objectKey(kind, namespace, name);
    return this.writes.run(key, async () => {
      if (this.objects.has(key)) throw new AlreadyExistsError(`${kind} "${namespace}/${name}" already exists`);
      const meta = object.metadata;
      const created = {
        apiVersion: API_VERSION,
        kind,
        metadata: {
          name,
          namespace,
          uid: randomUUID(),
          generation: 1,
          creationTimestamp: nowTimestamp(),
          ...pickDefined(meta, ['labels', 'annotations', 'ownerReferences', 'finalizers']),
        },
        spec: structuredClone(object.spec),
      } as AnyResource;
      return (await this.commit(key, 'ADDED', created)) as ResourceKinds[K];
    });
  }

  async update<K extends KindName>(kind: K, object: ResourceKinds[K]): Promise<ResourceKinds[K]> {
    const problems = [
      ...identityProblems(kind, object),
      ...metadataProblems(object.metadata),
      ...schemaProblems(kind, 'spec', object.spec),
    ];
    if (problems.length > 0) throw invalid(kind, object.metadata?.name, problems);
    return this.replace(kind, object, (current) => {
      const specChanged = !isDeepStrictEqual(current.spec, object.spec);
      const metadata: ObjectMeta = {
        ...current.metadata,
        labels: object.metadata.labels,
        annotations: object.metadata.annotations,
        ownerReferences: object.metadata.ownerReferences,
        finalizers: object.metadata.finalizers,
        generation: (current.metadata.generation ?? 1) + (specChanged ? 1 : 0),
      };
      return { ...current, metadata: dropUndefined(metadata), spec: structuredClone(object.spec) } as AnyResource;
    });
  }

  async updateStatus<K extends KindName>(kind: K, object: ResourceKinds[K]): Promise<ResourceKinds[K]> {
    const problems = identityProblems(kind, object);
    if (object.status !== undefined) problems.push(...schemaProblems(kind, 'status', object.status));
    if (problems.length > 0) throw invalid(kind, object.metadata?.name, problems);
    return this.replace(kind, object, (current) => {
      const next = { ...current, status: structuredClone(object.status) } as AnyResource;
      if (next.status === undefined) delete next.status;
      return next;
    });
  }

  async delete(kind: KindName, namespace: string, name: string): Promise<boolean> {
    const key = objectKey(kind, namespace, name);
    const deleted = await this.writes.run(key, async () => {
      const current = this.objects.get(key);
      if (!current) return undefined;
      if (current.metadata.finalizers?.length) {
        // Like the API server: mark it, and let the finalizers' owners remove it by clearing them.
        if (!current.metadata.deletionTimestamp) {
          const marked = structuredClone(current);
          marked.metadata.deletionTimestamp = nowTimestamp();
          await this.commit(key, 'MODIFIED', marked);
        }
        return undefined;
      }
      await this.commit(key, 'DELETED', structuredClone(current));
      return current;
    });
    if (deleted === undefined) return this.objects.has(key);
    await this.deleteDependents(deleted.metadata.uid);
    return true;
  }

  async watch<K extends KindName>(
    kind: K,
    namespace: string | undefined,
    handler: (event: WatchEvent<K>) => void,
  ): Promise<Watch> {
    const queue: WatchEvent<K>[] = [];
    let stopped = false;
    let draining = false;
    const drain = () => {
      draining = false;
      while (!stopped && queue.length > 0) {
        const event = queue.shift() as WatchEvent<K>;
        try {
          handler(event);
        } catch (error) {
          this.warn('a watch handler threw', { kind, error: String(error) });
        }
      }
    };
    const subscriber: Subscriber = {
      kind,
      namespace,
      deliver: (event) => {
        if (stopped) return;
        queue.push({ type: event.type, object: structuredClone(event.object) as ResourceKinds[K] });
        if (!draining) {
          draining = true;
          setImmediate(drain);
        }
      },
    };
    // Replay and subscription happen in one turn: no change can fall between them.
    for (const object of this.snapshot(kind, namespace)) subscriber.deliver({ type: 'ADDED', object });
    this.subscribers.add(subscriber);
    return {
      stop: async () => {
        stopped = true;
        this.subscribers.delete(subscriber);
      },
    };
  }

  /** Ends every watch, waits for writes in progress and releases the directory. */
  async close(): Promise<void> {
    if (this.writes.signal.aborted) return;
    this.subscribers.clear();
    await this.writes.close();
    await fs.rm(path.join(this.options.dir, LOCK_FILE), { force: true });
  }

  private async replace<K extends KindName>(
    kind: K,
    object: ResourceKinds[K],
    change: (current: AnyResource) => AnyResource,
  ): Promise<ResourceKinds[K]> {
    const { name, namespace, resourceVersion } = object.metadata;
    if (!resourceVersion) {
      throw invalid(kind, name, ['metadata.resourceVersion: must be specified for an update']);
    }
    const key = objectKey(kind, namespace, name);
    return this.writes.run(key, async () => {
      const current = this.objects.get(key);
      if (!current) throw new NotFoundError(`${kind} "${namespace}/${name}" not found`);
      if (current.metadata.resourceVersion !== resourceVersion) {
        throw new ConflictError(
          `Operation cannot be fulfilled on ${RESOURCES[kind].plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        );
      }
      const next = change(structuredClone(current));
      // The API server answers a no-op write with the object as it is: no new version, no event.
      if (isDeepStrictEqual(next, current)) return structuredClone(current) as ResourceKinds[K];
      if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
        await this.commit(key, 'DELETED', next);
        queueMicrotask(() => void this.deleteDependents(next.metadata.uid).catch(() => undefined));
        return structuredClone(next) as ResourceKinds[K];
      }
      return (await this.commit(key, 'MODIFIED', next)) as ResourceKinds[K];
    });
  }

  /** Gives `object` the next resourceVersion, persists the change and publishes it in version order. */
  private async commit(key: string, type: WatchEvent<KindName>['type'], object: AnyResource): Promise<AnyResource> {
    const version = await this.issueVersion();
    object.metadata.resourceVersion = String(version);
    const file = this.fileOf(object);
    try {
      if (type === 'DELETED') await removeFileDurably(file);
      else await writeFileAtomic(file, `${serialiseWithinLimit(object)}\n`);
    } catch (error) {
      this.finish(version, null);
      throw error;
    }
    const published = new Promise<void>((resolve) => this.published.set(version, resolve));
    this.finish(version, () => {
      if (type === 'DELETED') this.objects.delete(key);
      else this.objects.set(key, object);
      for (const subscriber of this.subscribers) {
        if (subscriber.kind !== object.kind) continue;
        if (subscriber.namespace !== undefined && subscriber.namespace !== object.metadata.namespace) continue;
        subscriber.deliver({ type, object });
      }
    });
    await published;
    return structuredClone(object);
  }

  private finish(version: number, publish: (() => void) | null): void {
    this.finished.set(version, publish);
    while (this.finished.has(this.lastPublished + 1)) {
      const next = ++this.lastPublished;
      this.finished.get(next)?.();
      this.finished.delete(next);
      this.published.get(next)?.();
      this.published.delete(next);
    }
  }

  private async issueVersion(): Promise<number> {
    while (this.lastIssued >= this.reserved) {
      this.reserving ??= this.reserveVersions().finally(() => (this.reserving = undefined));
      await this.reserving;
    }
    return ++this.lastIssued;
  }

  private async reserveVersions(): Promise<void> {
    const reserved = this.lastIssued + VERSION_BLOCK;
    await writeFileAtomic(path.join(this.options.dir, VERSION_FILE), `${reserved}\n`);
    this.reserved = reserved;
  }

  private async deleteDependents(ownerUid: string | undefined): Promise<void> {
    if (!ownerUid) return;
    const dependents = [...this.objects.values()].filter((o) =>
      o.metadata.ownerReferences?.some((ref) => ref.uid === ownerUid),
    );
    for (const dependent of dependents) {
      await this.delete(dependent.kind, dependent.metadata.namespace, dependent.metadata.name);
    }
  }

  private snapshot(kind: KindName, namespace?: string): AnyResource[] {
    return [...this.objects.values()]
      .filter((o) => o.kind === kind && (namespace === undefined || o.metadata.namespace === namespace))
      .sort((a, b) =>
        a.metadata.namespace === b.metadata.namespace
          ? a.metadata.name.localeCompare(b.metadata.name)
          : a.metadata.namespace.localeCompare(b.metadata.namespace),
      );
  }

  private fileOf(object: AnyResource): string {
    const { plural } = RESOURCES[object.kind];
    return path.join(this.options.dir, plural, object.metadata.namespace, `${object.metadata.name}.json`);
  }

  private async load(): Promise<void> {
    let highest = await readNumber(path.join(this.options.dir, VERSION_FILE));
    for (const kind of Object.keys(RESOURCES) as KindName[]) {
      const kindDir = path.join(this.options.dir, RESOURCES[kind].plural);
      for (const namespace of await readDirNames(kindDir)) {
        const nsDir = path.join(kindDir, namespace);
        for (const file of await readDirNames(nsDir)) {
          const full = path.join(nsDir, file);
          if (file.endsWith(TEMP_SUFFIX)) {
            await fs.rm(full, { force: true });
            continue;
          }
          if (!file.endsWith('.json')) continue;
          const object = await readResource(full, kind);
          if (!object) {
            this.warn('a resource file could not be read; it is ignored', { file: full });
            continue;
          }
          this.objects.set(objectKey(kind, object.metadata.namespace, object.metadata.name), object);
          highest = Math.max(highest, Number(object.metadata.resourceVersion) || 0);
        }
      }
    }
    this.lastIssued = highest;
    this.lastPublished = highest;
    this.reserved = highest;
  }

  private warn(message: string, detail: Record<string, unknown>): void {
    this.options.onWarning?.(message, detail);
  }
}

/** Raised when another live process serves the directory. */
export class StoreInUseError extends Error {
  constructor(dir: string, pid: number) {
    super(`the resource store in ${dir} is in use by process ${pid}; one process per data directory`);
    this.name = 'StoreInUseError';
  }
}

/**
 * Claims `dir` for this process: refused while the process named in the lock file lives; a lock left by a process
 * that died (kill -9) is taken over. The pid of this very process counts as stale (a container's pid 1 restarted).
 */
async function lockDirectory(dir: string): Promise<void> {
  const file = path.join(dir, LOCK_FILE);
  const holder = Number.parseInt(await fs.readFile(file, 'utf8').catch(() => ''), 10);
  if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isProcessAlive(holder)) {
    throw new StoreInUseError(dir, holder);
  }
  await writeFileAtomic(file, `${process.pid}\n`);
}

function objectKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** etcd's default request limit (--max-request-bytes): a real cluster refuses a larger object. */
export const OBJECT_MAX_BYTES = 1.5 * 1024 * 1024;

/** The object as it is stored (one serialisation, also what is measured); InvalidError past etcd's limit. */
function serialiseWithinLimit(object: AnyResource): string {
  const json = JSON.stringify(object);
  const size = Buffer.byteLength(json);
  if (size <= OBJECT_MAX_BYTES) return json;
  const problem = `the object is ${size} bytes serialised; the limit is ${OBJECT_MAX_BYTES} (etcd's request size)`;
  throw invalid(object.kind, object.metadata.name, [problem]);
}

function invalid(kind: KindName, name: string | undefined, problems: string[]): InvalidError {
  return new InvalidError(`${kind} "${name ?? ''}" is invalid: ${problems.join('; ')}`, problems);
}

function identityProblems(kind: KindName, object: { apiVersion?: unknown; kind?: unknown }): string[] {
  const problems: string[] = [];
  if (object.apiVersion !== API_VERSION) problems.push(`apiVersion: must be ${API_VERSION}`);
  if (object.kind !== kind) problems.push(`kind: must be ${kind}`);
  return problems;
}

function nameProblems(name: unknown, namespace: unknown): string[] {
  const problems: string[] = [];
  if (typeof name !== 'string' || name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    problems.push(
      'metadata.name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "-" or ".", and must start and end with an alphanumeric character (at most 253 characters)',
    );
  }
  if (typeof namespace !== 'string' || namespace.length > 63 || !DNS_LABEL.test(namespace)) {
    problems.push(
      'metadata.namespace: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "-", and must start and end with an alphanumeric character (at most 63 characters)',
    );
  }
  return problems;
}

function metadataProblems(meta: Partial<ObjectMeta> | undefined): string[] {
  const problems: string[] = [];
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta?.[field];
    if (map === undefined) continue;
    if (typeof map !== 'object' || map === null || Object.values(map).some((v) => typeof v !== 'string')) {
      problems.push(`metadata.${field}: must map strings to strings`);
    }
  }
  return problems;
}

function pickDefined<T extends object, F extends keyof T>(source: T, fields: F[]): Partial<Pick<T, F>> {
  const picked: Partial<Pick<T, F>> = {};
  for (const field of fields) if (source[field] !== undefined) picked[field] = structuredClone(source[field]);
  return picked;
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

async function readDirNames(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function readNumber(file: string): Promise<number> {
  try {
    return Number.parseInt(await fs.readFile(file, 'utf8'), 10) || 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

async function readResource(file: string, kind: KindName): Promise<AnyResource | undefined> {
  try {
    const object = JSON.parse(await fs.readFile(file, 'utf8')) as AnyResource;
    if (object?.kind !== kind || typeof object.metadata?.name !== 'string') return undefined;
    return object;
  } catch {
    return undefined;
  }
}
