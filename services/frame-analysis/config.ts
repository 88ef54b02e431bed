import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Joi from 'joi';
import { envBoolean, envPort, loadConfig, platformEnvSchema, toPlatformConfig } from '../lib/config/index.js';
import type { PlatformConfig, PlatformEnv, SettingsScope } from '../lib/config/index.js';
import { multiPoseModel } from '../lib/inference/import/index.js';
import {
  vlmEndpointFrom,
  vlmEnvSchema,
  vlmImageMaxSideSchema,
  vlmMaxTokensSchema,
  type VlmEnv,
} from '../lib/llm/index.js';

/** The pattern library shipped with the service. */
export const SHIPPED_PATTERNS_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'patterns.yaml');

/** The contract's limit per frame file. */
export const MAX_FRAME_BYTES = 5 * 1024 * 1024;

/** Where and how to reach an OpenAI-compatible vision-language model, and when to stop asking it. */
export interface VlmConfig {
  baseUrl: string;
  model: string;
  apiKey?: string;
  maxTokens: number;
  temperature: number;
  timeoutMs: number;
  /** Longest side of the frames sent to the model (they are downscaled, never enlarged). */
  imageMaxSide: number;
  /** Consecutive failures that open the circuit, and how long it stays open. */
  breakerFailures: number;
  breakerOpenMs: number;
}

/** Validated settings of the frame-analysis service. */
export interface FrameAnalysisConfig {
  platform: PlatformConfig;
  host: string;
  port: number;
  patternsFile: string;
  /** Multi-person pose model: a directory name under the models dir or an absolute path. */
  poseModel: string;
  /** People scored under this are ignored. */
  minPersonScore: number;
  limits: {
    maxFrames: number;
    maxFrameBytes: number;
    /** Largest decoded frame, in pixels (width × height). */
    maxFramePixels: number;
    /** Whole request body: every frame at its limit plus room for the form fields. */
    maxBodyBytes: number;
  };
  /** VLM confirmation when the request does not say (`vlm_enabled`). */
  vlmEnabledByDefault: boolean;
  vlm?: VlmConfig;
}

const OWNED_PREFIXES = ['FRAME_ANALYSIS_', 'VLM_'];

/** The environment as `schema` validates it (defaults applied). */
interface FrameAnalysisEnv extends PlatformEnv, VlmEnv {
  FRAME_ANALYSIS_HOST: string;
  FRAME_ANALYSIS_PORT: number;
  FRAME_ANALYSIS_PATTERNS_FILE?: string;
  FRAME_ANALYSIS_POSE_MODEL: string;
  FRAME_ANALYSIS_MIN_PERSON_SCORE: number;
  FRAME_ANALYSIS_MAX_FRAMES: number;
  FRAME_ANALYSIS_MAX_FRAME_PIXELS: number;
  FRAME_ANALYSIS_VLM_ENABLED: boolean;
  VLM_MAX_TOKENS: number;
  VLM_IMAGE_MAX_SIDE: number;
  VLM_BREAKER_FAILURES: number;
  VLM_BREAKER_OPEN_MS: number;
}

const schema = Joi.object<FrameAnalysisEnv, true>({
  ...platformEnvSchema,
  FRAME_ANALYSIS_HOST: Joi.string().default('127.0.0.1'),
  FRAME_ANALYSIS_PORT: envPort().default(8085),
  FRAME_ANALYSIS_PATTERNS_FILE: Joi.string(),
  FRAME_ANALYSIS_POSE_MODEL: Joi.string().default(multiPoseModel.name),
  FRAME_ANALYSIS_MIN_PERSON_SCORE: Joi.number().min(0).max(1).default(0.2),
  FRAME_ANALYSIS_MAX_FRAMES: Joi.number().integer().min(1).max(256).default(32),
  FRAME_ANALYSIS_MAX_FRAME_PIXELS: Joi.number().integer().min(1).max(268_402_689).default(40_000_000),
  FRAME_ANALYSIS_VLM_ENABLED: envBoolean().default(false),
  ...vlmEnvSchema,
  ...vlmMaxTokensSchema,
  ...vlmImageMaxSideSchema,
  VLM_BREAKER_FAILURES: Joi.number().integer().min(1).max(100).default(3),
  VLM_BREAKER_OPEN_MS: Joi.number().integer().min(0).max(3_600_000).default(30_000),
});

/** What frame-analysis reads from the environment, and the prefixes it owns. */
export const frameAnalysisSettings: SettingsScope = { schema, prefixes: OWNED_PREFIXES };

/** Form fields are small: 64 KiB covers them many times over. */
const FIELDS_ALLOWANCE = 64 * 1024;

/** Reads the service's settings from `env` (the only place process.env reaches); throws ConfigError listing every problem. */
export function loadFrameAnalysisConfig(env: NodeJS.ProcessEnv): FrameAnalysisConfig {
  const c = loadConfig('frame-analysis', schema, env, OWNED_PREFIXES);
  const vlm = vlmEndpointFrom(c);
  const maxFrames = c.FRAME_ANALYSIS_MAX_FRAMES;
  return {
    platform: toPlatformConfig(c),
    host: c.FRAME_ANALYSIS_HOST,
    port: c.FRAME_ANALYSIS_PORT,
    patternsFile: path.resolve(c.FRAME_ANALYSIS_PATTERNS_FILE ?? SHIPPED_PATTERNS_FILE),
    poseModel: c.FRAME_ANALYSIS_POSE_MODEL,
    minPersonScore: c.FRAME_ANALYSIS_MIN_PERSON_SCORE,
    limits: {
      maxFrames,
      maxFrameBytes: MAX_FRAME_BYTES,
      maxFramePixels: c.FRAME_ANALYSIS_MAX_FRAME_PIXELS,
      maxBodyBytes: maxFrames * (MAX_FRAME_BYTES + 1024) + FIELDS_ALLOWANCE,
    },
    vlmEnabledByDefault: c.FRAME_ANALYSIS_VLM_ENABLED,
    vlm: vlm && {
      ...vlm,
      maxTokens: c.VLM_MAX_TOKENS,
      imageMaxSide: c.VLM_IMAGE_MAX_SIDE,
      breakerFailures: c.VLM_BREAKER_FAILURES,
      breakerOpenMs: c.VLM_BREAKER_OPEN_MS,
    },
  };
}
