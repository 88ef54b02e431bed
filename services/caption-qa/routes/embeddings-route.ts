import Joi from 'joi';
import type { Logger } from '../../lib/log/index.js';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { StorageUnavailableError } from '../../lib/storage/index.js';
import { VectorStoreUnavailableError } from '../../lib/vectors/index.js';
import { EMBEDDING_FAILED, errorBodySchema, IMAGE_DATA_REQUIRED } from '../errors.js';
import type { CaptionIngest, IngestResult } from '../ingest/caption-ingest.js';
import { metadataSchema, type CaptionMetadataInput } from '../ingest/caption-metadata.js';

/** The embedding request as validated (other top-level fields are allowed and ignored). */
export interface EmbeddingRequest {
  image_data: string;
  metadata: CaptionMetadataInput;
}

/** The request body schema: the contract's fields, each failure phrased as the contract's detail. */
export function embeddingRequestSchema(maxCaptionChars: number): Joi.ObjectSchema<EmbeddingRequest> {
  return Joi.object<EmbeddingRequest, true>({
    image_data: Joi.string()
      .trim()
      .min(1)
      .required()
      .messages({
        'any.required': IMAGE_DATA_REQUIRED,
        'string.empty': IMAGE_DATA_REQUIRED,
        'string.base': IMAGE_DATA_REQUIRED,
      })
      .description('Base64 frame (JPEG, PNG, WebP or GIF; kept and embedded) or any other caption payload'),
    metadata: metadataSchema(maxCaptionChars),
  })
    .unknown(true)
    .messages({ 'object.base': 'The request body must be a JSON object' })
    .label('EmbeddingRequest');
}

function message(result: IngestResult): string {
  const frame = result.frameKept ? 'frame kept' : `frame not kept: ${result.frameReason}`;
  const ignored = result.ignored.length > 0 ? `; ignored metadata keys: ${result.ignored.join(', ')}` : '';
  return `Caption embedded and stored (${frame})${ignored}`;
}

/** POST /embeddings: stores a caption (and its frame). */
export function embeddingsRoute(ingest: CaptionIngest, maxCaptionChars: number, logger: Logger): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/embeddings',
    summary: 'Store a caption: its text embedded, its frame kept and embedded when image_data is an image',
    tags: ['embeddings'],
    request: { body: embeddingRequestSchema(maxCaptionChars) },
    responses: {
      200: {
        description: 'Stored; `id` is the caption id (sources name it, frames are served under it)',
        schema: Joi.object({
          status: Joi.string().valid('success').required(),
          message: Joi.string().required(),
          id: Joi.string().required(),
        }).label('EmbeddingSuccess'),
      },
      413: { description: 'Body over CAPTION_QA_MAX_BODY_MB', schema: errorBodySchema },
      422: {
        description:
          'image_data missing, empty or whitespace; metadata not an object; metadata.result missing or empty',
        schema: errorBodySchema,
      },
      500: { description: 'Embedding processing failed (logged with the request id)', schema: errorBodySchema },
      503: { description: 'Embedding processing failed: storage is unavailable', schema: errorBodySchema },
    },
    handler: async (ctx) => {
      const body = ctx.state.body;
      let result: IngestResult;
      try {
        result = await ingest.ingest(body.image_data, body.metadata);
      } catch (error) {
        // A backend outage is a 503 with the contract's detail, its cause logged; anything else is unexpected (500).
        if (!(error instanceof VectorStoreUnavailableError || error instanceof StorageUnavailableError)) throw error;
        logger.error('embedding storage unavailable', { requestId: ctx.state.requestId, error: error.message });
        throw new HttpError(503, `${EMBEDDING_FAILED}: storage is unavailable`);
      }
      ctx.body = { status: 'success', message: message(result), id: result.id };
    },
  });
}
