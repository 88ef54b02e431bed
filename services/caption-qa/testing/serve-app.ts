import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureDefaultModels } from '../../../test/support/models.js';
import { loadModels, type LoadedModels } from '../../lib/inference/index.js';
import { createLogger, type Logger } from '../../lib/log/index.js';
import { LocalObjectStore } from '../../lib/storage/index.js';
import { LanceDbVectorStore } from '../../lib/vectors/index.js';
import { createApp, type CaptionQaDeps } from '../app.js';
import { KeptFrames } from '../frames/kept-frames.js';
import { SourceRegistry } from '../sources/known-sources.js';

/** The two embedders caption-qa uses, real, sessions on the main thread. */
export type QaModels = LoadedModels<'imageEmbedder' | 'textEmbedder'>;

/** Test support: the real image and text embedders. */
export async function realEmbedders(): Promise<QaModels> {
  return loadModels({
    modelsDir: await ensureDefaultModels(),
    provider: 'cpu',
    threads: 2,
    isolation: 'main',
    roles: ['imageEmbedder', 'textEmbedder'] as const,
  });
}

/** Test settings: everything small and explicit. */
export const TEST_CONFIG: CaptionQaDeps['config'] = {
  retrieval: {
    topK: 5,
    minScore: 0.2,
    timeZone: 'UTC',
    atToleranceMs: 5 * 60_000,
    collapseSimilarity: 0.75,
    collapseGapMs: 120_000,
  },
  heartbeatMs: 15_000,
  maxTokens: 256,
  temperature: 0,
  retention: { maxBytes: 1024 * 1024, maxPixels: 40_000_000, maxCount: 100, maxAgeMs: 0, sweepIntervalMs: 60_000 },
  maxBodyBytes: 4 * 1024 * 1024,
  maxCaptionChars: 500,
  maxQuestionChars: 300,
};

/** A served app on 127.0.0.1 with fresh stores in a temp dir, and its parts. */
export interface ServedQa {
  url: string;
  api: string;
  deps: CaptionQaDeps;
  logger: Logger;
  close(): Promise<void>;
}

/** Test support: serves caption-qa on fresh LanceDB tables and a local frame store under a temp dir. */
export async function serveQa(
  models: QaModels,
  overrides: Partial<Omit<CaptionQaDeps, 'config'>> & { config?: Partial<CaptionQaDeps['config']> } = {},
): Promise<ServedQa> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'caption-qa-'));
  const logger = overrides.logger ?? createLogger({ service: 'caption-qa-test', level: 'error', json: true });
  const vectors = path.join(dir, 'vectors');
  const captions = await LanceDbVectorStore.open({
    dir: vectors,
    table: 'captions',
    dimension: models.textEmbedder.dimension,
  });
  const frames = await LanceDbVectorStore.open({
    dir: vectors,
    table: 'frames',
    dimension: models.imageEmbedder.dimension,
  });
  const store = new LocalObjectStore(path.join(dir, 'objects'));
  const deps: CaptionQaDeps = {
    logger,
    textEmbedder: models.textEmbedder,
    imageEmbedder: models.imageEmbedder,
    captions,
    frames,
    keptFrames: new KeptFrames(store, 'caption-qa'),
    sources: new SourceRegistry(store, 'caption-qa'),
    ...overrides,
    config: { ...TEST_CONFIG, ...overrides.config },
  };
  const { app } = createApp(deps);
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    api: `${url}/api`,
    deps,
    logger,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await captions.close();
      await frames.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One parsed Server-Sent Event: its name and JSON data, or a comment. */
export type SseEvent = { event: string; data: any } | { comment: string };

/** Test support: splits an event-stream body into events (data parsed as JSON) and comments, in order. */
export function parseEventStream(body: string): SseEvent[] {
  return body
    .split('\n\n')
    .filter((frame) => frame.length > 0)
    .map((frame) => {
      if (frame.startsWith(':')) return { comment: frame.slice(1).trim() };
      const lines = frame.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data: JSON.parse(data) };
    });
}

/** Test support: POSTs a JSON body. */
export function postJson(url: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
}
