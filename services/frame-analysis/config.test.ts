import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../lib/config/index.js';
import { loadFrameAnalysisConfig, MAX_FRAME_BYTES, SHIPPED_PATTERNS_FILE } from './config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadFrameAnalysisConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('frame-analysis config', () => {
  it('applies the documented defaults: port 8085, shipped patterns, 32 frames, no VLM', () => {
    const config = loadFrameAnalysisConfig({ PATH: '/bin' });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8085,
      patternsFile: SHIPPED_PATTERNS_FILE,
      poseModel: 'movenet-multipose-lightning',
      minPersonScore: 0.2,
      vlmEnabledByDefault: false,
      limits: { maxFrames: 32, maxFrameBytes: MAX_FRAME_BYTES, maxFramePixels: 40_000_000 },
    });
    expect(config.limits.maxBodyBytes).toBe(32 * (MAX_FRAME_BYTES + 1024) + 64 * 1024);
    expect(config.vlm).toBeUndefined();
  });

  it('reads the VLM settings when VLM_BASE_URL is set', () => {
    const config = loadFrameAnalysisConfig({
      VLM_BASE_URL: 'http://127.0.0.1:8000/v1',
      VLM_MODEL: 'qwen2-vl',
      VLM_API_KEY: 'sk-1',
      VLM_TIMEOUT_MS: '5000',
      FRAME_ANALYSIS_VLM_ENABLED: 'true',
    });
    expect(config.vlmEnabledByDefault).toBe(true);
    expect(config.vlm).toEqual({
      baseUrl: 'http://127.0.0.1:8000/v1',
      model: 'qwen2-vl',
      apiKey: 'sk-1',
      maxTokens: 300,
      temperature: 0,
      timeoutMs: 5000,
      imageMaxSide: 512,
      breakerFailures: 3,
      breakerOpenMs: 30_000,
    });
  });

  it('lists every problem, unknown variables with its prefixes included', () => {
    expect(problemsOf({ FRAME_ANALYSIS_MAX_FRAMES: '0', VLM_BASE_ULR: 'http://x', VLM_BASE_URL: 'ftp://x' })).toEqual([
      'VLM_BASE_ULR is not a known setting',
      '"FRAME_ANALYSIS_MAX_FRAMES" must be greater than or equal to 1',
      expect.stringContaining('"VLM_BASE_URL" must be a valid uri'),
    ]);
  });
});
