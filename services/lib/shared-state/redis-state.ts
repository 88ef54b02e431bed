import { Redis } from 'ioredis';
import { SharedStateUnavailableError, type SharedState } from './shared-state.js';

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

/**
 * The SharedState of every replica, on Redis (ioredis). Commands are never queued while the connection is down: they
 * fail at once with SharedStateUnavailableError (a feature decides to fail open or closed), while the client keeps
 * reconnecting with back-off (capped at 5 s). Claims and counters use `SET NX PX` and Lua scripts, never a
 * read-modify-write from the client.
 */
export class RedisSharedState implements SharedState {
  readonly backend = 'redis';
  private readonly client: Redis;

  constructor(options: RedisSharedStateOptions) {
    this.client = new Redis(options.url, {
      keyPrefix: options.namespace,
      connectionName: options.clientName,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 2000,
      connectTimeout: 5000,
      retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt, 6), 5000),
    });
    // Without a listener ioredis prints every connection error; the caller decides how loud to be.
    this.client.on('error', (error: Error) => options.onError?.(error));
  }

  /** Resolves once connected (at start, so that a wrong URL is seen early); rejects with the first error. */
  async ready(): Promise<void> {
    if (this.client.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const onReady = () => {
        this.client.off('error', onError);
        resolve();
      };
      const onError = (error: Error) => {
        this.client.off('ready', onReady);
        reject(new SharedStateUnavailableError(`redis is unreachable: ${error.message}`, { cause: error }));
      };
      this.client.once('ready', onReady);
      this.client.once('error', onError);
    });
  }

  claim(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.run(async () => (await this.client.set(key, owner, 'PX', ttlMs, 'NX')) === 'OK');
  }

  release(key: string, owner: string): Promise<boolean> {
    return this.run(async () => Number(await this.client.eval(RELEASE, 1, key, owner)) === 1);
  }

  get(key: string): Promise<string | undefined> {
    return this.run(async () => (await this.client.get(key)) ?? undefined);
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    return this.run(async () => void (await this.client.set(key, value, 'PX', ttlMs)));
  }

  compareAndSet(key: string, expected: string | undefined, next: string, ttlMs: number): Promise<boolean> {
    if (expected === undefined) return this.claim(key, next, ttlMs);
    return this.run(async () => Number(await this.client.eval(COMPARE_AND_SET, 1, key, expected, next, ttlMs)) === 1);
  }

  increment(key: string, ttlMs: number, by = 1): Promise<number> {
    return this.run(async () => Number(await this.client.eval(INCREMENT, 1, key, by, ttlMs)));
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

  async close(): Promise<void> {
    if (this.client.status === 'end') return;
    await this.client.quit().catch(() => this.client.disconnect());
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
