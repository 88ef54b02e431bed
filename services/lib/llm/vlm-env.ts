import Joi from 'joi';
import { envHttpUrl } from '../config/index.js';
import type { LlmConfig } from './llm-config.js';

/**
 * The VLM_* settings every service with a vision-language model reads (frame-analysis, camera-rules, caption-runs):
 * one name, range and default each, so one setting configures them all under `argus up`.
 */
export interface VlmEnv {
  VLM_BASE_URL?: string;
  VLM_MODEL: string;
  VLM_API_KEY?: string;
  VLM_TEMPERATURE: number;
  VLM_TIMEOUT_MS: number;
}

/** joi keys of VlmEnv, for a service's config schema to spread. */
export const vlmEnvSchema = {
  VLM_BASE_URL: envHttpUrl(),
  VLM_MODEL: Joi.string().default('default'),
  VLM_API_KEY: Joi.string(),
  VLM_TEMPERATURE: Joi.number().min(0).max(2).default(0),
  VLM_TIMEOUT_MS: Joi.number().integer().min(100).max(300_000).default(20_000),
} satisfies Joi.StrictSchemaMap<VlmEnv>;

/** VLM_MAX_TOKENS: the answer's length, for the services that set one per service (not per request). */
export const vlmMaxTokensSchema = {
  VLM_MAX_TOKENS: Joi.number().integer().min(1).max(32_768).default(300),
};

/** VLM_IMAGE_MAX_SIDE: the longest side of the images sent (they are downscaled, never enlarged). */
export const vlmImageMaxSideSchema = {
  VLM_IMAGE_MAX_SIDE: Joi.number().integer().min(64).max(4096).default(512),
};

/** The model's endpoint and sampling temperature. */
export interface VlmEndpoint extends LlmConfig {
  temperature: number;
}

/** VlmEndpoint from values validated against `vlmEnvSchema`; undefined when VLM_BASE_URL is unset (no model). */
export function vlmEndpointFrom(values: VlmEnv): VlmEndpoint | undefined {
  if (typeof values.VLM_BASE_URL !== 'string' || values.VLM_BASE_URL === '') return undefined;
  return {
    baseUrl: values.VLM_BASE_URL,
    model: values.VLM_MODEL,
    apiKey: values.VLM_API_KEY,
    timeoutMs: values.VLM_TIMEOUT_MS,
    temperature: values.VLM_TEMPERATURE,
  };
}
