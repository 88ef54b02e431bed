import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../lib/config/index.js';
import { loadCaptionQaConfig } from './config.js';

describe('loadCaptionQaConfig', () => {
  it('has working defaults: port 4172, UTC, offline answerer, LanceDB and local frames under the data dir', () => {
    const config = loadCaptionQaConfig({ ARGUS_DATA_DIR: '/data' });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 4172,
      dataDir: path.resolve('/data/caption-qa'),
      llm: undefined,
      heartbeatMs: 15_000,
      bucket: 'caption-qa',
      storage: { backend: 'local', root: path.resolve('/data/caption-qa/frames') },
      vectors: {
        backend: 'lancedb',
        dir: path.resolve('/data/caption-qa/vectors'),
        captionTable: 'caption_qa_captions',
        frameTable: 'caption_qa_frames',
      },
      retention: { maxBytes: 4 * 1024 * 1024, maxCount: 10_000, maxAgeMs: 168 * 3_600_000 },
    });
    expect(config.retrieval).toEqual({
      topK: 8,
      minScore: 0.2,
      timeZone: 'UTC',
      atToleranceMs: 300_000,
      collapseSimilarity: 0.75,
      collapseGapMs: 120_000,
    });
  });

  it('shares the LLM settings with the other services and reads its own under CAPTION_QA_*', () => {
    const config = loadCaptionQaConfig({
      LLM_BASE_URL: 'http://vllm:8000/v1',
      LLM_MODEL: 'qwen2.5-7b',
      LLM_API_KEY: 'k',
      CAPTION_QA_TIME_ZONE: 'Europe/Paris',
      CAPTION_QA_TOP_K: '12',
      CAPTION_QA_VECTORDB_BACKEND: 'weaviate',
      CAPTION_QA_WEAVIATE_URL: 'http://weaviate:8080',
    });
    expect(config.llm).toEqual({ baseUrl: 'http://vllm:8000/v1', model: 'qwen2.5-7b', apiKey: 'k', timeoutMs: 15_000 });
    expect(config.retrieval).toMatchObject({ timeZone: 'Europe/Paris', topK: 12 });
    expect(config.vectors).toMatchObject({
      backend: 'weaviate',
      captionTable: 'CaptionQaCaptions',
      frameTable: 'CaptionQaFrames',
    });
  });

  it('stops start-up listing every problem: a zone that is not IANA, unknown variables, weaviate without a URL', () => {
    try {
      loadCaptionQaConfig({
        CAPTION_QA_TIME_ZONE: 'Mars/Olympus',
        CAPTION_QA_TOPK: '3',
        LLM_BASE_ULR: 'http://x',
        CAPTION_QA_VECTORDB_BACKEND: 'weaviate',
      });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems).toContain('"Mars/Olympus" is not an IANA time zone name');
      expect(problems).toContain('CAPTION_QA_TOPK is not a known setting');
      expect(problems).toContain('LLM_BASE_ULR is not a known setting');
      expect(problems).toContain('CAPTION_QA_WEAVIATE_URL');
    }
  });
});
