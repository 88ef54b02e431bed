import {
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';

/** Objects per page of a list (`limit`): a large collection comes in several requests, never one huge answer. */
export const LIST_PAGE_SIZE = 500;

/**
 * The whole collection, page by page (`limit`, then `continue` with the token of the page before) as the API server
 * serves large lists: the items of every page and the first page's resourceVersion (the list's snapshot), from which
 * a watch starts. A 410 on a continue (the snapshot was compacted) fails the list: the informer lists again.
 */
export async function listAllPages<T extends KubernetesObject>(
  page: (options: { limit: number; _continue?: string }) => Promise<KubernetesListObject<T>>,
  limit = LIST_PAGE_SIZE,
): Promise<KubernetesListObject<T>> {
  // Typed lists (V1JobList) name the token `_continue`; custom objects come as the API's JSON, `continue`.
  const tokenOf = (list: KubernetesListObject<T>): string | undefined =>
    list.metadata?._continue ?? (list.metadata as { continue?: string } | undefined)?.continue;
  const first = await page({ limit });
  const items = [...first.items];
  let token = tokenOf(first);
  // Each page moves the token on; an API server that handed back the same token would loop, so stop then.
  for (const seen = new Set<string>(); token && !seen.has(token);) {
    seen.add(token);
    const next = await page({ limit, _continue: token });
    items.push(...next.items);
    token = tokenOf(next);
  }
  const { _continue: _typed, continue: _json, ...metadata } = (first.metadata ?? {}) as Record<string, unknown>;
  return { ...first, metadata, items };
}

/** Back-off between restarts of a failed list or watch. */
export interface RestartBackoff {
  baseMs: number;
  maxMs: number;
}

/** What an informer tells its owner. */
export interface InformerHandlers<T> {
  added(object: T): void;
  modified(object: T): void;
  deleted(object: T): void;
  /** A list or watch failed; the informer restarts itself after a back-off. */
  failed?(error: unknown): void;
}

/** The informer's options. */
export interface InformerOptions {
  /** Asked of the server for every watch, so that a watch never hangs on a dead connection for ever. */
  timeoutSeconds: number;
  backoff: RestartBackoff;
  /** Only objects with these labels (e.g. `app.kubernetes.io/managed-by=argus-operator`). */
  labelSelector?: string;
}

/** client-node's Watch, asking for bookmarks (its ListWatch does not) and a server-side timeout on every watch. */
class BookmarkWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly timeoutSeconds: number,
  ) {
    super(config);
  }

  override watch(...[path, queryParams, callback, done]: Parameters<Watch['watch']>): Promise<AbortController> {
    return super.watch(
      path,
      { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: this.timeoutSeconds },
      callback,
      done,
    );
  }
}

/**
 * List-then-watch of one collection on client-node 1.4's ListWatch, made to last. ListWatch relists by itself after
 * a 410 Gone (ERROR event or status) and re-watches from the last resourceVersion (bookmarks included) when a stream
 * ends; on any other error it reports once and STOPS — so this class starts it again after an exponential back-off.
 */
export class RestartingInformer<T extends KubernetesObject> {
  private readonly listWatch: ListWatch<T>;
  private stopped = false;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private running?: Promise<void>;
  private resolveSynced!: () => void;
  /** Resolves once the first list has been delivered. */
  readonly synced: Promise<void> = new Promise((resolve) => (this.resolveSynced = resolve));
  private isSynced = false;
  private listedOnce = false;
  private resolveStopped!: () => void;
  private readonly stoppedSignal = new Promise<void>((resolve) => (this.resolveStopped = resolve));

  constructor(
    config: KubeConfig,
    path: string,
    list: () => Promise<KubernetesListObject<T>>,
    private readonly handlers: InformerHandlers<T>,
    private readonly options: InformerOptions,
  ) {
    const listed = async () => {
      const result = await list();
      this.failures = 0;
      this.listedOnce = true;
      return result;
    };
    const watch = new BookmarkWatch(config, options.timeoutSeconds);
    this.listWatch = new ListWatch<T>(path, watch, listed, false, options.labelSelector);
    this.listWatch.on('add', (o) => this.deliver(() => handlers.added(o)));
    this.listWatch.on('update', (o) => this.deliver(() => handlers.modified(o)));
    this.listWatch.on('delete', (o) => this.deliver(() => handlers.deleted(o)));
    this.listWatch.on('error', (error) => this.restartLater(error));
  }

  /** Whether the first list has been delivered. */
  get hasSynced(): boolean {
    return this.isSynced;
  }

  /**
   * The object as the last list and the watch events since delivered it (undefined when absent, or before the
   * first list): as fresh as the watch, which may trail a write that was just answered.
   */
  cached(namespace: string, name: string): T | undefined {
    return this.isSynced ? this.listWatch.get(name, namespace) : undefined;
  }

  /** Starts listing and watching; resolves once the first list is delivered (retrying until then) or on stop. */
  async start(): Promise<void> {
    this.run();
    await Promise.race([this.synced, this.stoppedSignal]);
  }

  /** Stops for good: no more events are delivered once this resolves, and no request stays open. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.resolveStopped();
    await this.listWatch.stop();
    // A watch request still being opened is only abortable once ListWatch holds it: stop again after that.
    await this.running;
    await this.listWatch.stop();
  }

  private run(): void {
    if (this.stopped) return;
    // ListWatch reports list/watch failures through its error callback, which restarts it.
    this.running = this.listWatch.start().then(
      () => this.markSynced(),
      (error: unknown) => this.restartLater(error),
    );
  }

  private markSynced(): void {
    // ListWatch.start() resolves after a failed list too: synced means a list was delivered.
    if (this.isSynced || this.stopped || !this.listedOnce) return;
    this.isSynced = true;
    this.resolveSynced();
  }

  private deliver(handler: () => void): void {
    if (this.stopped) return;
    this.failures = 0;
    handler();
  }

  private restartLater(error: unknown): void {
    if (this.stopped) return;
    this.handlers.failed?.(error);
    const delay = Math.min(this.options.backoff.maxMs, this.options.backoff.baseMs * 2 ** this.failures);
    this.failures++;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), delay);
  }
}
