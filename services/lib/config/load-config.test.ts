import { describe, expect, it } from '@jest/globals';
import Joi from 'joi';
import { ConfigError, envBoolean, envList, envPort, loadConfig } from './index.js';

const schema = Joi.object({
  SVC_PORT: envPort().default(8000),
  SVC_FLAG: envBoolean().default(false),
  SVC_LIST: envList().default([]),
  SVC_MODE: Joi.string().valid('a', 'b').default('a'),
});

describe('loadConfig', () => {
  it('converts values and applies defaults', () => {
    const cfg = loadConfig<any>('svc', schema, { SVC_PORT: '9000', SVC_FLAG: 'yes', SVC_LIST: 'x, y', PATH: '/bin' }, [
      'SVC_',
    ]);
    expect(cfg).toEqual({ SVC_PORT: 9000, SVC_FLAG: true, SVC_LIST: ['x', 'y'], SVC_MODE: 'a' });
  });

  it('lists every problem, unknown prefixed variables included', () => {
    let error: unknown;
    try {
      loadConfig('svc', schema, { SVC_PORT: '70000', SVC_MODE: 'c', SVC_TYPO: '1' }, ['SVC_']);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(/SVC_TYPO is not a known setting/);
    expect(problems.join('\n')).toMatch(/SVC_PORT/);
    expect(problems.join('\n')).toMatch(/SVC_MODE/);
  });
});
