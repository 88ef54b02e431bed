import { describe, expect, it } from '@jest/globals';
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
