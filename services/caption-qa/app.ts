import { createHttpApp, type HttpApp } from '../lib/http/index.js';
import type { ImageEmbedder, TextEmbedder } from '../lib/inference/index.js';
import type { Logger } from '../lib/log/index.js';
import type { VectorStore } from '../lib/vectors/index.js';
import { OFFLINE_MODEL } from './answer/offline-answer.js';
import type { AnswerModel } from './chat/answer-model.js';
import type { CaptionQaConfig } from './config.js';
import { captionQaErrorStyle } from './errors.js';
import type { KeptFrames } from './frames/kept-frames.js';
import { CaptionIngest } from './ingest/caption-ingest.js';
import type { Clock } from './question/parse-question.js';
import { Retriever } from './retrieval/retriever.js';
import { chatRoute } from './routes/chat-route.js';
import { embeddingsRoute } from './routes/embeddings-route.js';
import { frameRoute } from './routes/frame-route.js';
import { healthRoute, modelRoute } from './routes/health-route.js';
import type { SourceRegistry } from './sources/known-sources.js';

/** Base path of every route (the contract's `/api`). */
export const API_BASE_PATH = '/api';

/** Everything the HTTP surface needs; main.ts builds the real ones, tests their own. */
export interface CaptionQaDeps {
  logger: Logger;
  textEmbedder: TextEmbedder;
  imageEmbedder: ImageEmbedder;
  /** Caption text vectors (text-embedder dimension). */
  captions: VectorStore;
  /** Kept frames' image vectors (image-embedder dimension). */
  frames: VectorStore;
  keptFrames: KeptFrames;
  sources: SourceRegistry;
  /** The language model; undefined: the offline answerer. */
  model?: AnswerModel;
  clock?: Clock;
  config: Pick<
    CaptionQaConfig,
    | 'retrieval'
    | 'heartbeatMs'
    | 'maxTokens'
    | 'temperature'
    | 'retention'
    | 'maxBodyBytes'
    | 'maxCaptionChars'
    | 'maxQuestionChars'
  >;
}

/** Builds the caption-qa Koa app (no listen). */
export function createApp(deps: CaptionQaDeps): HttpApp {
  const { config } = deps;
  const clock = deps.clock ?? Date.now;
  const ingest = new CaptionIngest({
    textEmbedder: deps.textEmbedder,
    imageEmbedder: deps.imageEmbedder,
    captions: deps.captions,
    frames: deps.frames,
    keptFrames: deps.keptFrames,
    sources: deps.sources,
    frameLimits: { maxBytes: config.retention.maxBytes, maxPixels: config.retention.maxPixels },
    logger: deps.logger,
    clock,
  });
  const retriever = new Retriever(deps.textEmbedder, deps.captions, config.retrieval);
  return createHttpApp({
    info: {
      title: 'Argus caption question-answering',
      version: '1.0.0',
      description:
        'Questions about live video, answered from the captions the cameras produced: retrieval by similarity, time ' +
        'words and named cameras or runs, the answer streamed from an OpenAI-compatible LLM or, without one, an ' +
        'offline answer built from the captions. Captions (and their frames) are stored through /api/embeddings.',
      tags: {
        health: 'Liveness and the answering model',
        embeddings: 'Captions (and their frames) stored for retrieval',
        chat: 'Questions answered from the captions, streamed over SSE',
        frames: 'Frames kept with the captions',
      },
    },
    service: 'caption-qa',
    logger: deps.logger,
    errors: captionQaErrorStyle(),
    basePath: API_BASE_PATH,
    jsonLimit: `${config.maxBodyBytes}b`,
    routes: [
      healthRoute({ vectorBackend: deps.captions.backend, llmModel: deps.model?.model }),
      modelRoute(deps.model?.model ?? OFFLINE_MODEL),
      embeddingsRoute(ingest, config.maxCaptionChars, deps.logger),
      chatRoute(
        {
          retriever,
          keptFrames: deps.keptFrames,
          knownSources: () => deps.sources.known(),
          model: deps.model,
          clock,
          logger: deps.logger,
          zone: config.retrieval.timeZone,
          atToleranceMs: config.retrieval.atToleranceMs,
          heartbeatMs: config.heartbeatMs,
          maxTokens: config.maxTokens,
          temperature: config.temperature,
        },
        config.maxQuestionChars,
      ),
      frameRoute(deps.keptFrames),
    ],
  });
}
