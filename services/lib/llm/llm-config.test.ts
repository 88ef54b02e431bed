import { describe, expect, it } from '@jest/globals';
import Joi from 'joi';
import { llmConfigFrom, llmEnvSchema } from './llm-config.js';

const validate = (env: Record<string, string>) => Joi.object(llmEnvSchema).validate(env, { convert: true });

describe('LLM settings', () => {
  it('are absent without LLM_BASE_URL', () => {
    const { value, error } = validate({});
    expect(error).toBeUndefined();
    expect(llmConfigFrom(value)).toBeUndefined();
  });

  it('read the URL, model, key and time-out, with the defaults', () => {
    expect(llmConfigFrom(validate({ LLM_BASE_URL: 'http://vllm:8000/v1' }).value)).toEqual({
      baseUrl: 'http://vllm:8000/v1',
      model: 'default',
      apiKey: undefined,
      timeoutMs: 15_000,
    });
    const env = { LLM_BASE_URL: 'https://x/v1', LLM_MODEL: 'm', LLM_API_KEY: 'k', LLM_TIMEOUT_MS: '2500' };
    expect(llmConfigFrom(validate(env).value)).toEqual({
      baseUrl: 'https://x/v1',
      model: 'm',
      apiKey: 'k',
      timeoutMs: 2500,
    });
  });

  it.each([
    ['a URL that is not http(s)', { LLM_BASE_URL: 'ftp://x/v1' }],
    ['a time-out below 100 ms', { LLM_BASE_URL: 'http://x/v1', LLM_TIMEOUT_MS: '5' }],
  ])('refuse %s', (_why, env) => {
    expect(validate(env).error).toBeDefined();
  });
});
