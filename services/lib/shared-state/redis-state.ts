import { Redis } from 'ioredis';
import {
  compareBroadcastIds,
  SharedStateUnavailableError,
  type BroadcastEntry,
  type BroadcastListener,
  type SharedState,
} from './shared-state.js';

/** How to reach Redis, and whom to tell about connection trouble. */
export interface RedisSharedStateOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS). */
  url: string;
  /** Prefix of every key, e.g. `argus:alert-dispatch:` (replicas of one service share it). */
  namespace: string;
  /** Shown to the server as the connection's name (`CLIENT LIST`), e.g. `argus-alert-dispatch`. */
  clientName: string;
  /** The longest one command may take before it fails as unavailable. */
  commandTimeoutMs?: number;
  /** Called with each connection error (the adapter reconnects by itself); never with a password. */
  onError?: (error: Error) => void;
}

// Each script reads and writes one key atomically: replicas racing on it agree on the outcome.
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
const COMPARE_AND_SET = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 else return 0 end`;
const INCREMENT = `local value = redis.call('INCRBY', KEYS[1], ARGV[1])
  if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return value`;
// Numbers, keeps and publishes a batch (ARGV[3…]) in one step, so the ids, the backlog and every subscriber see one
// order. The epoch is taken when the count begins (TIME, in ms): after a restart that lost the count, new ids still
// order after old ones. One message carries the batch, each entry as `<id> <byte length> <item>`; answers the
// epoch and the first sequence number.
const BROADCAST = `local n = #ARGV - 2
  local last = redis.call('HINCRBY', KEYS[1], 'seq', n)
  local first = last - n + 1
  local epoch = redis.call('HGET', KEYS[1], 'epoch')
  if first == 1 or not epoch then
    local t = redis.call('TIME')
    epoch = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
    redis.call('HSET', KEYS[1], 'epoch', epoch)
  end
  local message = {}
  for i = 1, n do
    local item = ARGV[i + 2]
    local id = epoch .. '-' .. string.format('%d', first + i - 1)
    redis.call('LPUSH', KEYS[2], id .. ' ' .. item)
    message[i] = id .. ' ' .. #item .. ' ' .. item
  end
  redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[1]) - 1)
  redis.call('PUBLISH', ARGV[2], table.concat(message))
  return {epoch, first}`;

/** The scripts, defined once per connection: sent by SHA (EVALSHA), their text again only when Redis lost it. */
interface Scripts {
  argusRelease(key: string, owner: string): Promise<number>;
  argusCompareAndSet(key: string, expected: string, next: string, ttlMs: number): Promise<number>;
  argusIncrement(key: string, by: number, ttlMs: number): Promise<number>;
  argusBroadcast(
    countKey: string,
    keptKey: string,
    keep: number,
    channel: string,
    ...items: string[]
  ): Promise<[string, number]>;
}

/** An `<id> <item>` string as the broadcast script stores and publishes it. */
function parseEntry(raw: string): BroadcastEntry {
  const space = raw.indexOf(' ');
  return { id: raw.slice(0, space), item: raw.slice(space + 1) };
}

/** The entries of one published batch: `<id> <byte length> <item>` each, back to back. */
function parseMessage(message: Buffer): BroadcastEntry[] {
  const entries: BroadcastEntry[] = [];
  let pos = 0;
  while (pos < message.length) {
    const afterId = message.indexOf(0x20, pos);
    const afterLength = message.indexOf(0x20, afterId + 1);
    if (afterId < 0 || afterLength < 0) break;
    const end = afterLength + 1 + Number(message.toString('latin1', afterId + 1, afterLength));
    entries.push({
      id: message.toString('latin1', pos, afterId),
      item: message.toString('utf8', afterLength + 1, end),
    });
    pos = end;
  }
  return entries;
}

/** Broadcasts asked for in one event-loop turn, sent as one script call. */
interface PendingBatch {
  keep: number;
  items: string[];
  settle: Array<{ resolve: (entry: BroadcastEntry) => void; reject: (error: unknown) => void }>;
}

/** Resolves once `client` is connected; rejects with its first error. */
async function connected(client: Redis): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const onReady = () => {
      client.off('error', onError);
      resolve();
    };
    const onError = (error: Error) => {
      client.off('ready', onReady);
      reject(new SharedStateUnavailableError(`redis is unreachable: ${error.message}`, { cause: error }));
    };
    client.once('ready', onReady);
    client.once('error', onError);
  });
}

/**
 * The SharedState of every replica, on Redis (ioredis). Commands are never queued while the connection is down: they
 * fail at once with SharedStateUnavailableError (a feature decides to fail open or closed), while the client keeps
 * reconnecting with back-off (capped at 5 s). Claims and counters use `SET NX PX` and Lua scripts, never a
 * read-modify-write from the client. Broadcasts are published (PUBLISH) by the same script that numbers and keeps them;
 * subscriptions share a second connection.
 */
export class RedisSharedState implements SharedState {
  readonly backend = 'redis';
  private readonly client: Redis;
  private readonly scripts: Scripts;
  private readonly namespace: string;
  private readonly onError?: (error: Error) => void;
  /** The connection in subscriber mode (Redis allows no other commands there), made on the first subscribe. */
  private subscriber?: Promise<Redis>;
  private readonly listeners = new Map<string, Set<BroadcastListener>>();
  private readonly gapListeners = new Set<() => void>();
  private readonly batches = new Map<string, PendingBatch>();

  constructor(options: RedisSharedStateOptions) {
    this.namespace = options.namespace;
    this.onError = options.onError;
    this.client = new Redis(options.url, {
      keyPrefix: options.namespace,
      connectionName: options.clientName,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 2000,
      connectTimeout: 5000,
      retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt, 6), 5000),
    });
    this.client.defineCommand('argusRelease', { numberOfKeys: 1, lua: RELEASE });
    this.client.defineCommand('argusCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET });
    this.client.defineCommand('argusIncrement', { numberOfKeys: 1, lua: INCREMENT });
    this.client.defineCommand('argusBroadcast', { numberOfKeys: 2, lua: BROADCAST });
    this.scripts = this.client as Redis & Scripts;
    // Without a listener ioredis prints every connection error; the caller decides how loud to be.
    this.client.on('error', (error: Error) => options.onError?.(error));
  }

  /** Resolves once connected (at start, so that a wrong URL is seen early); rejects with the first error. */
  ready(): Promise<void> {
    return connected(this.client);
  }

  claim(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.run(async () => (await this.client.set(key, owner, 'PX', ttlMs, 'NX')) === 'OK');
  }

  release(key: string, owner: string): Promise<boolean> {
    return this.run(async () => Number(await this.scripts.argusRelease(key, owner)) === 1);
  }

  get(key: string): Promise<string | undefined> {
    return this.run(async () => (await this.client.get(key)) ?? undefined);
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    return this.run(async () => void (await this.client.set(key, value, 'PX', ttlMs)));
  }

  compareAndSet(key: string, expected: string | undefined, next: string, ttlMs: number): Promise<boolean> {
    if (expected === undefined) return this.claim(key, next, ttlMs);
    return this.run(async () => Number(await this.scripts.argusCompareAndSet(key, expected, next, ttlMs)) === 1);
  }

  increment(key: string, ttlMs: number, by = 1): Promise<number> {
    return this.run(async () => Number(await this.scripts.argusIncrement(key, by, ttlMs)));
  }

  delete(key: string): Promise<void> {
    return this.run(async () => void (await this.client.del(key)));
  }

  pushRecent(key: string, item: string, max: number): Promise<void> {
    return this.run(async () => {
      const results = await this.client
        .multi()
        .lpush(key, item)
        .ltrim(key, 0, max - 1)
        .exec();
      const failed = results?.find(([error]) => error);
      if (!results || failed) throw failed?.[0] ?? new Error('the transaction was discarded');
    });
  }

  recent(key: string, count: number): Promise<string[]> {
    return this.run(() => this.client.lrange(key, 0, count - 1));
  }

  /**
   * Broadcasts asked for in the same event-loop turn go to Redis as one script call and one published message: under
   * load that is one command and one message per turn instead of one per item (order and atomicity unchanged).
   */
  broadcast(channel: string, item: string, keep: number): Promise<BroadcastEntry> {
    let batch = this.batches.get(channel);
    if (!batch) {
      batch = { keep, items: [], settle: [] };
      this.batches.set(channel, batch);
      setImmediate(() => void this.sendBatch(channel));
    }
    batch.keep = keep;
    batch.items.push(item);
    const pending = batch;
    return new Promise((resolve, reject) => pending.settle.push({ resolve, reject }));
  }

  private async sendBatch(channel: string): Promise<void> {
    const batch = this.batches.get(channel);
    if (!batch) return; // sent by close() already
    this.batches.delete(channel);
    const keys = [`broadcast:${channel}:count`, `broadcast:${channel}:kept`] as const;
    try {
      const [epoch, first] = await this.run(() =>
        this.scripts.argusBroadcast(keys[0], keys[1], batch.keep, this.channelName(channel), ...batch.items),
      );
      batch.settle.forEach(({ resolve }, i) => resolve({ id: `${epoch}-${Number(first) + i}`, item: batch.items[i] }));
    } catch (error) {
      for (const { reject } of batch.settle) reject(error);
    }
  }

  subscribe(channel: string, listener: BroadcastListener, onGap?: () => void): Promise<() => Promise<void>> {
    return this.run(async () => {
      const subscriber = await this.subscriberConnection();
      const name = this.channelName(channel);
      let listeners = this.listeners.get(name);
      if (!listeners) {
        listeners = new Set();
        this.listeners.set(name, listeners);
        await subscriber.subscribe(name);
      }
      listeners.add(listener);
      if (onGap) this.gapListeners.add(onGap);
      return async () => {
        listeners.delete(listener);
        if (onGap) this.gapListeners.delete(onGap);
        if (listeners.size > 0 || this.listeners.get(name) !== listeners) return;
        this.listeners.delete(name);
        await subscriber.unsubscribe(name).catch(() => undefined);
      };
    });
  }

  backlog(channel: string, afterId?: string): Promise<BroadcastEntry[]> {
    return this.run(async () => {
      const kept = (await this.client.lrange(`broadcast:${channel}:kept`, 0, -1)).reverse().map(parseEntry);
      return afterId === undefined ? kept : kept.filter((entry) => compareBroadcastIds(entry.id, afterId) > 0);
    });
  }

  async close(): Promise<void> {
    // Broadcasts already asked for go out first, as they would have a moment later.
    await Promise.all([...this.batches.keys()].map((channel) => this.sendBatch(channel)));
    const subscriber = await this.subscriber?.catch(() => undefined);
    if (subscriber && subscriber.status !== 'end') await subscriber.quit().catch(() => subscriber.disconnect());
    if (this.client.status === 'end') return;
    await this.client.quit().catch(() => this.client.disconnect());
  }

  /** Channel names are not keys: ioredis does not prefix them, so the namespace is added here. */
  private channelName(channel: string): string {
    return `${this.namespace}broadcast:${channel}`;
  }

  private subscriberConnection(): Promise<Redis> {
    this.subscriber ??= (async () => {
      // Same server and options; ioredis subscribes again to every channel after a reconnect (autoResubscribe).
      const subscriber = this.client.duplicate();
      subscriber.on('error', (error: Error) => this.onError?.(error));
      subscriber.on('messageBuffer', (name: Buffer, message: Buffer) => {
        const listeners = this.listeners.get(name.toString());
        if (!listeners) return;
        for (const entry of parseMessage(message)) {
          for (const listener of listeners) {
            try {
              listener(entry);
            } catch {
              // A listener must not stop delivery to the others.
            }
          }
        }
      });
      await connected(subscriber);
      // Every later `ready` follows a lost connection. ioredis subscribes again by itself but says nothing when that
      // is done; subscribing here too (harmless) and awaiting it means that a backlog read by an `onGap` listener
      // cannot miss an entry broadcast between that read and the subscription.
      subscriber.on('ready', () => {
        const channels = [...this.listeners.keys()];
        void (channels.length > 0 ? subscriber.subscribe(...channels) : Promise.resolve()).then(
          () => this.gapListeners.forEach((onGap) => onGap()),
          (error: Error) => this.onError?.(error),
        );
      });
      return subscriber;
    })();
    const pending = this.subscriber;
    // A failed first connection is forgotten, so the next subscribe tries again.
    pending.catch(() => {
      if (this.subscriber === pending) this.subscriber = undefined;
    });
    return pending;
  }

  /** Runs one command; any failure (connection down, timeout, server error) is SharedStateUnavailableError. */
  private async run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw new SharedStateUnavailableError(`shared state (redis) unavailable: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}
