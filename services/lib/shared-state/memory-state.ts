import { compareBroadcastIds, type BroadcastEntry, type BroadcastListener, type SharedState } from './shared-state.js';

/** Milliseconds since some fixed point; injectable so tests move time themselves. */
export type NowMs = () => number;

type Entry = { kind: 'value'; value: string; expiresAt: number } | { kind: 'list'; items: string[] };

/** A broadcast channel of this process: its count, kept entries (oldest first) and listeners. */
interface Channel {
  epoch: number;
  seq: number;
  kept: BroadcastEntry[];
  listeners: Set<BroadcastListener>;
}

/**
 * The SharedState of one process (the embedded default): a map with expiry, at most `maxKeys` keys (the oldest
 * written goes first beyond that, so a flood of distinct keys cannot grow the process without bound). Expired keys
 * are dropped when read, and a sweep every `maxKeys / 4` writes drops the rest.
 */
export class MemorySharedState implements SharedState {
  readonly backend = 'memory';
  private readonly entries = new Map<string, Entry>();
  private readonly channels = new Map<string, Channel>();
  private writesSinceSweep = 0;
  private closed = false;

  constructor(
    private readonly now: NowMs = Date.now,
    private readonly maxKeys = 100_000,
  ) {}

  async claim(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.compareAndSet(key, undefined, owner, ttlMs);
  }

  async release(key: string, owner: string): Promise<boolean> {
    this.assertOpen();
    if (this.value(key) !== owner) return false;
    this.entries.delete(key);
    return true;
  }

  async get(key: string): Promise<string | undefined> {
    this.assertOpen();
    return this.value(key);
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.assertOpen();
    this.write(key, { kind: 'value', value, expiresAt: this.now() + ttlMs });
  }

  async compareAndSet(key: string, expected: string | undefined, next: string, ttlMs: number): Promise<boolean> {
    this.assertOpen();
    if (this.value(key) !== expected) return false;
    this.write(key, { kind: 'value', value: next, expiresAt: this.now() + ttlMs });
    return true;
  }

  async increment(key: string, ttlMs: number, by = 1): Promise<number> {
    this.assertOpen();
    const current = this.live(key);
    if (current?.kind === 'value') {
      const value = Number(current.value) + by;
      current.value = String(value);
      return value;
    }
    this.write(key, { kind: 'value', value: String(by), expiresAt: this.now() + ttlMs });
    return by;
  }

  async delete(key: string): Promise<void> {
    this.assertOpen();
    this.entries.delete(key);
  }

  async pushRecent(key: string, item: string, max: number): Promise<void> {
    this.assertOpen();
    const current = this.live(key);
    const items = current?.kind === 'list' ? current.items : [];
    items.unshift(item);
    items.length = Math.min(items.length, max);
    this.write(key, { kind: 'list', items });
  }

  async recent(key: string, count: number): Promise<string[]> {
    this.assertOpen();
    const current = this.live(key);
    return current?.kind === 'list' ? current.items.slice(0, count) : [];
  }

  async broadcast(channel: string, item: string, keep: number): Promise<BroadcastEntry> {
    this.assertOpen();
    const state = this.channel(channel);
    const entry = { id: `${state.epoch}-${++state.seq}`, item };
    state.kept.push(entry);
    if (state.kept.length > keep) state.kept.splice(0, state.kept.length - keep);
    // Delivered before this call returns, like Redis delivers before its reply: a listener's failure is its own.
    for (const listener of state.listeners) {
      try {
        listener(entry);
      } catch {
        // A listener must not stop delivery to the others.
      }
    }
    return entry;
  }

  // A process never loses its own channels: `onGap` is never called.
  async subscribe(channel: string, listener: BroadcastListener): Promise<() => Promise<void>> {
    this.assertOpen();
    const { listeners } = this.channel(channel);
    listeners.add(listener);
    return async () => void listeners.delete(listener);
  }

  async backlog(channel: string, afterId?: string): Promise<BroadcastEntry[]> {
    this.assertOpen();
    const kept = this.channels.get(channel)?.kept ?? [];
    return afterId === undefined ? [...kept] : kept.filter((entry) => compareBroadcastIds(entry.id, afterId) > 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
    this.channels.clear();
  }

  private channel(name: string): Channel {
    let channel = this.channels.get(name);
    if (!channel) {
      channel = { epoch: this.now(), seq: 0, kept: [], listeners: new Set() };
      this.channels.set(name, channel);
    }
    return channel;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the shared state is closed');
  }

  private value(key: string): string | undefined {
    const entry = this.live(key);
    return entry?.kind === 'value' ? entry.value : undefined;
  }

  /** The entry of `key` unless it expired (then it is dropped). */
  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry?.kind === 'value' && entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private write(key: string, entry: Entry): void {
    // Re-inserted last, so the map's order is the order of last writes: the oldest is evicted first.
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (++this.writesSinceSweep >= Math.max(1, this.maxKeys / 4)) this.sweep();
    while (this.entries.size > this.maxKeys) this.entries.delete(this.entries.keys().next().value!);
  }

  private sweep(): void {
    this.writesSinceSweep = 0;
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (entry.kind === 'value' && entry.expiresAt <= now) this.entries.delete(key);
    }
  }
}
