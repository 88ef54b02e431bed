import { listen, type StopOptions } from '../lib/http/index.js';
import { importDefaultModels, multiPoseModel } from '../lib/inference/import/index.js';
import { loadMultiPoseEstimator } from '../lib/inference/index.js';
import { createLogger, type Logger } from '../lib/log/index.js';
import { createApp } from './app.js';
import type { FrameAnalysisConfig } from './config.js';
import { loadPatternLibrary } from './patterns/pattern-library.js';
import { VlmConfirmer } from './vlm/vlm-confirmer.js';

/** A running frame-analysis service. */
export interface RunningFrameAnalysis {
  url: string;
  close(options?: StopOptions): Promise<void>;
}

/**
 * Starts the frame-analysis service from its validated configuration: loads the pattern library (an invalid one stops
 * start-up with every problem listed), imports the multi-person pose model on first use of the models dir, creates
 * its session, listens. close() lets in-flight analyses finish, then releases the session.
 */
export async function startFrameAnalysis(config: FrameAnalysisConfig, logger?: Logger): Promise<RunningFrameAnalysis> {
  const { platform } = config;
  const log = logger ?? createLogger({ service: 'frame-analysis', level: platform.logLevel, json: platform.logJson });
  const patterns = await loadPatternLibrary(config.patternsFile);
  if (config.poseModel === multiPoseModel.name) {
    await importDefaultModels(platform.modelsDir, { models: [multiPoseModel], log: (message) => log.info(message) });
  }
  const estimator = await loadMultiPoseEstimator({
    modelsDir: platform.modelsDir,
    model: config.poseModel,
    provider: platform.provider,
    threads: platform.threads,
    isolation: platform.isolation,
  });
  const vlm = config.vlm ? new VlmConfirmer(config.vlm, log) : undefined;
  let server;
  try {
    await estimator.warmUp();
    const { app } = createApp({ logger: log, estimator, patterns, vlm, config });
    server = await listen(app, {
      port: config.port,
      host: config.host,
      logger: log,
      name: 'frame-analysis',
      apiKeys: config.platform.apiKeys,
    });
  } catch (error) {
    await estimator.release();
    throw error;
  }
  log.info('frame analysis ready', {
    url: server.url,
    pose_model: estimator.info.name,
    vlm: config.vlm?.model ?? null,
    patterns: patterns.map((p) => p.id),
  });
  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    close: (options) =>
      (closing ??= (async () => {
        await server.close(options);
        await estimator.release();
      })()),
  };
}
