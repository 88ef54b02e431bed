import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import {
  compareBroadcastIds,
  MemorySharedState,
  openSharedState,
  RedisSharedState,
  SharedStateUnavailableError,
} from './index.js';
import { describeSharedStateContract } from './shared-state.contract.js';
import { REDIS_SERVER, startRedisServer, type RedisServer } from './testing/redis-server.js';

describeSharedStateContract('memory', async () => {
  let now = 1_000_000;
  const state = new MemorySharedState(() => now);
  return {
    state,
    elapse: async (ms) => {
      now += ms;
    },
    close: () => state.close(),
  };
});

describe('MemorySharedState', () => {
  it('holds at most maxKeys keys, dropping the oldest written first', async () => {
    const state = new MemorySharedState(Date.now, 4);
    for (let i = 0; i < 6; i++) await state.set(`k${i}`, String(i), 60_000);
    expect(await state.get('k0')).toBeUndefined();
    expect(await state.get('k1')).toBeUndefined();
    expect(await state.get('k5')).toBe('5');
    expect(await state.get('k2')).toBe('2');
  });
});

const withRedis = REDIS_SERVER ? describe : describe.skip;
if (!REDIS_SERVER) console.warn('SKIPPED: redis-server is not installed (apt-get install redis-server); Redis tests');

withRedis('RedisSharedState on a real redis-server', () => {
  let server: RedisServer;
  let namespaces = 0;

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  /**
   * Moves time forward for the keys of `namespace` without waiting: each key's remaining time to live is shortened
   * by `ms` (PEXPIRE), and a key whose time is up is deleted, as Redis would have expired it.
   */
  async function elapse(admin: Redis, namespace: string, ms: number): Promise<void> {
    for (const key of await admin.keys(`${namespace}*`)) {
      const ttl = await admin.pttl(key);
      if (ttl < 0) continue;
      if (ttl <= ms) await admin.del(key);
      else await admin.pexpire(key, ttl - ms);
    }
  }

  describeSharedStateContract('redis', async () => {
    const namespace = `test:${++namespaces}:`;
    const state = new RedisSharedState({ url: server.url, namespace, clientName: 'argus-test' });
    await state.ready();
    const admin = new Redis(server.url);
    return {
      state,
      elapse: (ms) => elapse(admin, namespace, ms),
      close: async () => {
        await state.close();
        admin.disconnect();
      },
    };
  });

  it('names its connection and prefixes every key with its namespace', async () => {
    const state = new RedisSharedState({ url: server.url, namespace: 'argus:svc:', clientName: 'argus-svc' });
    await state.ready();
    const admin = new Redis(server.url);
    try {
      await state.set('a', '1', 60_000);
      expect(await admin.get('argus:svc:a')).toBe('1');
      expect(await admin.client('LIST')).toContain('name=argus-svc');
    } finally {
      await state.close();
      admin.disconnect();
    }
  });

  it('rejects with SharedStateUnavailableError while Redis is down, never crashes, and works again once it is back', async () => {
    const state = new RedisSharedState({ url: server.url, namespace: 'outage:', clientName: 'argus-outage' });
    await state.ready();
    try {
      await state.set('before', '1', 60_000);
      await server.stop();
      await expect(state.get('before')).rejects.toBeInstanceOf(SharedStateUnavailableError);
      await expect(state.increment('c', 1000)).rejects.toBeInstanceOf(SharedStateUnavailableError);
      await server.restart();
      // The client reconnects by itself (bounded: at most 5 s between attempts); the restarted server is empty.
      let value: string | undefined | null = null;
      for (let attempt = 0; attempt < 200 && value === null; attempt++) {
        value = await state.get('before').catch(async () => {
          await new Promise((resolve) => setTimeout(resolve, 50));
          return null;
        });
      }
      expect(value).toBeUndefined();
      expect(await state.increment('c', 1000)).toBe(1);
    } finally {
      await state.close();
    }
  }, 30_000);

  it('listens again after Redis restarts, and numbers the restarted count after the ids before it', async () => {
    const state = new RedisSharedState({ url: server.url, namespace: 'resubscribe:', clientName: 'argus-resub' });
    await state.ready();
    const received: string[] = [];
    let gaps = 0;
    try {
      await state.subscribe(
        'events',
        (entry) => received.push(entry.id),
        () => gaps++,
      );
      const before = await state.broadcast('events', 'a', 10);
      await server.restart();
      // Reconnection of both connections is the client's own (bounded back-off): retry until a broadcast arrives.
      let after: string | undefined;
      for (let attempt = 0; attempt < 400 && !received.includes(after ?? '-'); attempt++) {
        after ??= await state.broadcast('events', 'b', 10).then(
          (entry) => entry.id,
          () => undefined,
        );
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(received).toEqual([before.id, after]);
      // Told that it listened again and may have missed entries (after its subscription was confirmed).
      for (let turn = 0; turn < 400 && gaps === 0; turn++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(gaps).toBeGreaterThanOrEqual(1);
      expect(compareBroadcastIds(after!, before.id)).toBeGreaterThan(0);
      expect((await state.backlog('events', before.id)).map((e) => e.item)).toEqual(['b']);
    } finally {
      await state.close();
    }
  }, 30_000);

  it('fails at start on an unreachable server (openSharedState), with the reason', async () => {
    const unreachable = `redis://127.0.0.1:${server.port === 1 ? 2 : 1}`;
    await expect(
      openSharedState({ backend: 'redis', url: unreachable, namespace: 'x:', clientName: 'argus-x' }),
    ).rejects.toThrow(/redis is unreachable: .*ECONNREFUSED/);
  });
});
