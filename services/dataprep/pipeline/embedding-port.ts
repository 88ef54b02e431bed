import type { EmbedMediaRequest, EmbedMediaResult } from './index.js';

/** The pipeline as the HTTP layer sees it: main.ts binds embedMedia to its models, vector store and logger. */
export type EmbedMedia = (request: EmbedMediaRequest) => Promise<EmbedMediaResult>;
