import type { CameraRule } from '../../../operator/api/index.js';
import type { ResourceStore, Watch } from '../../../operator/ports/index.js';
import { byAge, ruleView, type RuleView } from './rule-book.js';

/**
 * The rules as the store's watch delivers them (an informer): the event handler matches every recorder event against
 * them without listing the store — a list per MQTT message would cost the API server two requests per event per
 * watcher. The watch replays every rule, then each change in order, and is re-established by the store after a break
 * (relisting), so the cache follows the store within the watch's delay (milliseconds). Only matching reads it: a
 * rule's claims and results are read and written in the store itself. Started on first use.
 */
export class RuleCache {
  private readonly byName = new Map<string, CameraRule>();
  private watch?: Promise<Watch>;
  private closed = false;

  constructor(
    private readonly store: ResourceStore,
    private readonly namespace: string,
  ) {}

  /** Every rule, oldest first (as RuleBook.list), once the watch has replayed them. */
  async list(): Promise<RuleView[]> {
    if (this.closed) throw new Error('the rule cache is closed');
    await (this.watch ??= this.open());
    return [...this.byName.values()].sort(byAge).map(ruleView);
  }

  private async open(): Promise<Watch> {
    const watch = await this.store.watch('CameraRule', this.namespace, ({ type, object }) => {
      if (type === 'DELETED') this.byName.delete(object.metadata.name);
      else this.byName.set(object.metadata.name, object);
    });
    // The store replays the existing rules to a new watch before any change: after the API server's initial list
    // (kubernetes driver: watch() resolves once synced), or on the next turn (embedded store).
    await new Promise((resolve) => setImmediate(resolve));
    return watch;
  }

  async close(): Promise<void> {
    this.closed = true;
    const watch = this.watch;
    this.watch = undefined;
    await (await watch?.catch(() => undefined))?.stop();
  }
}
