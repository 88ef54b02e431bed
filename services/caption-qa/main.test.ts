import { loadCaptionQaConfig } from './config.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ensureDefaultModels } from '../../test/support/models.js';
import { ConfigError } from '../lib/config/index.js';
import { createLogger } from '../lib/log/index.js';
import { startCaptionQa } from './main.js';
import { parseEventStream, postJson } from './testing/serve-app.js';

let dataDir: string;
let env: NodeJS.ProcessEnv;
const logger = createLogger({ service: 'caption-qa-main-test', level: 'error', json: true });

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'caption-qa-main-'));
  env = { ARGUS_MODELS_DIR: await ensureDefaultModels(), ARGUS_DATA_DIR: dataDir, CAPTION_QA_PORT: '0' };
}, 120_000);

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('startCaptionQa', () => {
  it('serves embedded and keeps captions and the names of their sources across a restart', async () => {
    const first = await startCaptionQa(loadCaptionQaConfig(env), logger);
    try {
      expect((await (await fetch(`${first.url}/api/health`)).json()).status).toBe('healthy');
      const stored = await postJson(`${first.url}/api/embeddings`, {
        image_data: 'none',
        metadata: { result: 'A forklift moves pallets', camera: 'Loading-Dock' },
      });
      expect(stored.status).toBe(200);
    } finally {
      await first.close();
    }
    const second = await startCaptionQa(loadCaptionQaConfig(env), logger);
    try {
      const response = await postJson(`${second.url}/api/chat`, { input: 'what did the loading dock camera see?' });
      const sources = parseEventStream(await response.text()).find((e) => 'event' in e && e.event === 'sources');
      expect((sources as any).data).toEqual([
        expect.objectContaining({ text: 'A forklift moves pallets', camera: 'Loading-Dock' }),
      ]);
    } finally {
      await second.close();
    }
  }, 120_000);

  it('refuses to start with an invalid configuration, listing the problem', async () => {
    // The configuration is refused before anything starts (argus up and serve load it first, then start).
    expect(() => loadCaptionQaConfig({ ...env, CAPTION_QA_TIME_ZONE: 'Nowhere/Else' })).toThrow(ConfigError);
  });
});
