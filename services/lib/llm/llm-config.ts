import Joi from 'joi';
import { envHttpUrl } from '../config/index.js';

/**
 * Where and how to reach an OpenAI-compatible chat-completions endpoint. `baseUrl` is the API root including its
 * version path (`http://vllm:8000/v1`); the client appends `/chat/completions`, trailing slashes ignored.
 */
export interface LlmConfig {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Bounds the wait for response headers, for the first token and then each gap between chunks; not the whole answer. */
  timeoutMs: number;
}

/** The LLM_* settings as `llmEnvSchema` validates them (defaults applied). */
export interface LlmEnv {
  LLM_BASE_URL?: string;
  LLM_MODEL: string;
  LLM_API_KEY?: string;
  LLM_TIMEOUT_MS: number;
}

/** joi keys for LLM_BASE_URL, LLM_MODEL, LLM_API_KEY and LLM_TIMEOUT_MS, for a service's config schema to spread. */
export const llmEnvSchema = {
  LLM_BASE_URL: envHttpUrl(),
  LLM_MODEL: Joi.string().default('default'),
  LLM_API_KEY: Joi.string(),
  LLM_TIMEOUT_MS: Joi.number().integer().min(100).max(300_000).default(15_000),
} satisfies Joi.StrictSchemaMap<LlmEnv>;

/** LlmConfig from values validated against `llmEnvSchema`; undefined when LLM_BASE_URL is unset (no model). */
export function llmConfigFrom(values: LlmEnv): LlmConfig | undefined {
  if (typeof values.LLM_BASE_URL !== 'string' || values.LLM_BASE_URL === '') return undefined;
  return {
    baseUrl: values.LLM_BASE_URL,
    model: values.LLM_MODEL,
    apiKey: values.LLM_API_KEY,
    timeoutMs: values.LLM_TIMEOUT_MS,
  };
}
