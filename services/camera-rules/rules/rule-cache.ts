import type { CameraRule } from '../../../operator/api/index.js';
import type { ResourceStore, Watch } from '../../../operator/ports/index.js';
import { byAge, ruleView, type RuleView } from './rule-book.js';

/**
 * The rules as the store's watch delivers them (an informer): the event handler matches every recorder event against
 * them without listing the store — a list per MQTT message would cost the API server two requests per event per
 * watcher. The watch replays every rule, then each change in order, and is re-established by the store after a break
 * (relisting), so the cache follows the store within the watch's delay (milliseconds). Only matching reads it: a
 * rule's claims and results are read and written in the store itself. Started on first use. The API server's watch
 * opens only once it has listed the rules, which it retries until it can (an outage, a refused account): until then
 * a `list` waits, but gives up when its signal aborts or the cache is closed, and `close` never waits for it.
 */
export class RuleCache {
  private readonly byName = new Map<string, CameraRule>();
  private watch?: Promise<Watch>;
  /** The watch once open (until closed). */
  private opened?: Watch;
  private readonly closing = new AbortController();

  constructor(
    private readonly store: ResourceStore,
    private readonly namespace: string,
  ) {}

  /** Every rule, oldest first (as RuleBook.list), once the watch has replayed them. */
  async list(signal?: AbortSignal): Promise<RuleView[]> {
    this.closing.signal.throwIfAborted();
    this.watch ??= this.open();
    await untilAborted(this.watch, [this.closing.signal, ...(signal ? [signal] : [])]);
    return [...this.byName.values()].sort(byAge).map(ruleView);
  }

  private async open(): Promise<Watch> {
    const watch = await this.store.watch('CameraRule', this.namespace, ({ type, object }) => {
      if (type === 'DELETED') this.byName.delete(object.metadata.name);
      else this.byName.set(object.metadata.name, object);
    });
    // Closed while it was opening: nobody waits for it any more.
    if (this.closing.signal.aborted) {
      await watch.stop();
      return watch;
    }
    this.opened = watch;
    // The store replays the existing rules to a new watch before any change: after the API server's initial list
    // (kubernetes driver: watch() resolves once synced), or on the next turn (embedded store).
    await new Promise((resolve) => setImmediate(resolve));
    return watch;
  }

  /** Stops the watch: at once when it is open, else as soon as it opens (waiting `list` calls are refused). */
  async close(): Promise<void> {
    this.closing.abort(new Error('the rule cache is closed'));
    const opened = this.opened;
    this.opened = undefined;
    await opened?.stop();
  }
}

/** `promise`, or the reason of the first of `signals` to abort before it settles (no listener is left behind). */
function untilAborted<T>(promise: Promise<T>, signals: AbortSignal[]): Promise<T> {
  const aborted = signals.find((signal) => signal.aborted);
  if (aborted) return Promise.reject(aborted.reason);
  return new Promise<T>((resolve, reject) => {
    const listeners = signals.map((signal) => [signal, () => settle(() => reject(signal.reason))] as const);
    const settle = (finish: () => void) => {
      for (const [signal, listener] of listeners) signal.removeEventListener('abort', listener);
      finish();
    };
    for (const [signal, listener] of listeners) signal.addEventListener('abort', listener, { once: true });
    promise.then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}
