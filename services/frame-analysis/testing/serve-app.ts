import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { importDefaultModels, multiPoseModel } from '../../lib/inference/import/index.js';
import { loadMultiPoseEstimator, type LoadedMultiPoseEstimator } from '../../lib/inference/index.js';
import { createLogger } from '../../lib/log/index.js';
import { createApp, type FrameAnalysisDeps } from '../app.js';
import { MAX_FRAME_BYTES, SHIPPED_PATTERNS_FILE } from '../config.js';
import { loadPatternLibrary } from '../patterns/pattern-library.js';

/** Test support: the models directory with the multi-person pose model imported. */
export async function multiPoseModelsDir(): Promise<string> {
  const dir = await ensureDefaultModels();
  await importDefaultModels(dir, { models: [multiPoseModel] });
  return dir;
}

/** Test support: the real multi-person pose model (session created on first use). */
export async function realEstimator(model = multiPoseModel.name): Promise<LoadedMultiPoseEstimator> {
  return loadMultiPoseEstimator({ modelsDir: await multiPoseModelsDir(), model, provider: 'cpu', threads: 2 });
}

/** A served app on 127.0.0.1 and its URL prefix (`…/api/v1`). */
export interface ServedApp {
  url: string;
  api: string;
  close(): Promise<void>;
}

/** Test support: serves the app with the given parts (shipped patterns, generous limits by default). */
export async function serveApp(
  deps: Partial<FrameAnalysisDeps> & Pick<FrameAnalysisDeps, 'estimator'>,
): Promise<ServedApp> {
  const { app } = createApp({
    logger: createLogger({ service: 'frame-analysis-test', level: 'error', json: true }),
    patterns: deps.patterns ?? (await loadPatternLibrary(SHIPPED_PATTERNS_FILE)),
    ...deps,
    config: deps.config ?? {
      minPersonScore: 0.2,
      vlmEnabledByDefault: false,
      limits: {
        maxFrames: 8,
        maxFrameBytes: MAX_FRAME_BYTES,
        maxFramePixels: 40_000_000,
        maxBodyBytes: 48 * 1024 * 1024,
      },
    },
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    api: `${url}/api/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Test support: a multipart form with text fields and frames (Buffers, in order). */
export function analysisForm(fields: Record<string, string>, frames: Buffer[]): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  frames.forEach((bytes, i) => form.append('frames', new Blob([new Uint8Array(bytes)]), `frame-${i}.jpg`));
  return form;
}
