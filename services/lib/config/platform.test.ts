import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Joi from 'joi';
import { ConfigError, loadConfig } from './load-config.js';
import { platformEnvSchema, toPlatformConfig } from './platform.js';

const load = (env: Record<string, string>) => toPlatformConfig(loadConfig('argus', Joi.object(platformEnvSchema), env));

describe('platform control-plane settings', () => {
  it('default to the embedded control plane in namespace default (outside a pod)', () => {
    expect(load({})).toMatchObject({ controlPlane: 'embedded', namespace: 'default' });
  });

  it('read ARGUS_CONTROL_PLANE and ARGUS_NAMESPACE', () => {
    expect(load({ ARGUS_CONTROL_PLANE: 'kubernetes', ARGUS_NAMESPACE: 'video' })).toMatchObject({
      controlPlane: 'kubernetes',
      namespace: 'video',
    });
  });

  it('refuse an unknown mode and a namespace that is not a DNS label', () => {
    const error = (() => {
      try {
        return load({ ARGUS_CONTROL_PLANE: 'cloud', ARGUS_NAMESPACE: 'Video_NS' });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toHaveLength(2);
  });
});

describe('platform shared-state setting', () => {
  it('leaves ARGUS_REDIS_URL unset (state in memory) and reads a redis:// or rediss:// URL', () => {
    expect(load({}).redisUrl).toBeUndefined();
    expect(load({ ARGUS_REDIS_URL: 'redis://redis:6379/0' }).redisUrl).toBe('redis://redis:6379/0');
    expect(load({ ARGUS_REDIS_URL: 'rediss://user:pw@redis.example:6380' }).redisUrl).toBe(
      'rediss://user:pw@redis.example:6380',
    );
  });

  it('refuses a URL of another scheme', () => {
    expect(() => load({ ARGUS_REDIS_URL: 'http://redis:6379' })).toThrow(ConfigError);
  });
});

describe('platform API keys', () => {
  const problemsOf = (env: Record<string, string>) => {
    try {
      load(env);
      return [];
    } catch (error) {
      return (error as ConfigError).problems;
    }
  };
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'api-keys-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('are none by default: no key is needed', () => {
    expect(load({}).apiKeys).toEqual([]);
  });

  it('read ARGUS_API_KEYS as a comma-separated list, entries trimmed, repeats once', () => {
    const keys = load({ ARGUS_API_KEYS: ' first-key-0123456789 ,second-key-0123456789,first-key-0123456789' });
    expect(keys.apiKeys).toEqual(['first-key-0123456789', 'second-key-0123456789']);
  });

  it('read ARGUS_API_KEYS_FILE one key a line, skipping blank lines and # comments (a mounted Secret)', async () => {
    const file = path.join(dir, 'keys');
    await writeFile(file, '# rotated 2026-11\nfirst-key-0123456789\n\n  second-key-0123456789  \r\n');
    expect(load({ ARGUS_API_KEYS_FILE: file }).apiKeys).toEqual(['first-key-0123456789', 'second-key-0123456789']);
  });

  it('refuse an empty list, a short or unsendable key, an unreadable or empty file, and both ways at once, quoting no key', async () => {
    const empty = path.join(dir, 'empty');
    await writeFile(empty, '# no key yet\n\n');
    const problems = [
      ...problemsOf({ ARGUS_API_KEYS: '' }),
      ...problemsOf({ ARGUS_API_KEYS: ' , ' }),
      ...problemsOf({ ARGUS_API_KEYS: 'short-key' }),
      ...problemsOf({ ARGUS_API_KEYS: 'a key with spaces in it' }),
      ...problemsOf({ ARGUS_API_KEYS_FILE: path.join(dir, 'missing') }),
      ...problemsOf({ ARGUS_API_KEYS_FILE: empty }),
      ...problemsOf({ ARGUS_API_KEYS_FILE: empty, ARGUS_API_KEYS: 'first-key-0123456789' }),
    ];
    expect(problems).toEqual([
      '"ARGUS_API_KEYS" is not allowed to be empty',
      '"ARGUS_API_KEYS" names no key',
      '"ARGUS_API_KEYS" key 1 is not 16 to 4096 characters of letters, digits and -._~+/ (then = padding)',
      '"ARGUS_API_KEYS" key 1 is not 16 to 4096 characters of letters, digits and -._~+/ (then = padding)',
      '"ARGUS_API_KEYS_FILE" cannot be read (ENOENT)',
      '"ARGUS_API_KEYS_FILE" holds no key',
      '"ARGUS_API_KEYS_FILE" and ARGUS_API_KEYS are both set: give the keys one way',
    ]);
    expect(problems.join('\n')).not.toMatch(/short-key|spaces in it|first-key/);
  });
});
