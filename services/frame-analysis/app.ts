import { createHttpApp, type HttpApp } from '../lib/http/index.js';
import type { LoadedMultiPoseEstimator } from '../lib/inference/index.js';
import type { Logger } from '../lib/log/index.js';
import { AnalysisMetrics } from './analysis/analysis-metrics.js';
import { FrameAnalyzer } from './analysis/frame-analyzer.js';
import type { FrameAnalysisConfig } from './config.js';
import { analysisErrorStyle } from './errors.js';
import type { Pattern } from './patterns/pattern.js';
import { analyzeRoute } from './routes/analyze-route.js';
import { healthRoute } from './routes/health-route.js';
import type { VlmConfirmer } from './vlm/vlm-confirmer.js';

/** Base path of every route (the contract's `/api/v1`). */
export const API_BASE_PATH = '/api/v1';

/** Everything the HTTP surface needs; main.ts builds the real ones, tests their own. */
export interface FrameAnalysisDeps {
  logger: Logger;
  estimator: LoadedMultiPoseEstimator;
  patterns: Pattern[];
  vlm?: VlmConfirmer;
  config: Pick<FrameAnalysisConfig, 'limits' | 'vlmEnabledByDefault' | 'minPersonScore'>;
}

/** The side of the square frames are decoded into: the pose model's input, or 512 px when its manifest has none. */
function analysisSide(estimator: LoadedMultiPoseEstimator): number {
  const input = estimator.manifest.image;
  return input ? Math.max(input.width, input.height) : 512;
}

/** Builds the frame-analysis Koa app (no listen). */
export function createApp(deps: FrameAnalysisDeps): HttpApp {
  const metrics = new AnalysisMetrics();
  const analyzer = new FrameAnalyzer({
    estimator: deps.estimator,
    minPersonScore: deps.config.minPersonScore,
    vlm: deps.vlm,
    logger: deps.logger,
    metrics,
  });
  const http = createHttpApp({
    info: {
      title: 'Argus frame analysis',
      version: '1.0.0',
      description:
        'Several frames of one entity in one request: multi-person poses, the entity followed across frames, a ' +
        'behaviour pattern from the pattern library, optional confirmation by a vision-language model.',
      tags: {
        analysis: 'A batch of frames in; poses and the behaviour pattern they match out',
        health: 'The pose model, the VLM configuration and the pattern library in use',
      },
    },
    service: 'frame-analysis',
    logger: deps.logger,
    errors: analysisErrorStyle(),
    basePath: API_BASE_PATH,
    routes: [
      analyzeRoute({
        analyzer,
        patterns: deps.patterns,
        limits: deps.config.limits,
        analysisSide: analysisSide(deps.estimator),
        vlmEnabledByDefault: deps.config.vlmEnabledByDefault,
      }),
      healthRoute({
        estimator: deps.estimator,
        patterns: deps.patterns,
        vlm: deps.vlm,
        vlmEnabledByDefault: deps.config.vlmEnabledByDefault,
      }),
    ],
  });
  metrics.register(http.metrics.registry);
  return http;
}
