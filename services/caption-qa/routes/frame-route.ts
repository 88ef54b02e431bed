import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { StorageUnavailableError } from '../../lib/storage/index.js';
import type { KeptFrames } from '../frames/kept-frames.js';
import { CAPTION_ID_PATTERN } from '../ingest/caption-id.js';

/** GET /frames/{id}: the kept frame of caption `id` (the `frame_url` of a source). */
export function frameRoute(frames: KeptFrames): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/frames/:id',
    summary: 'The kept frame of a caption, as it was sent (JPEG, PNG, WebP or GIF)',
    tags: ['frames'],
    request: {
      params: Joi.object<{ id: string }, true>({
        id: Joi.string().lowercase().pattern(CAPTION_ID_PATTERN).required().messages({
          'string.pattern.base': 'The frame id must be a caption id (a UUID)',
        }),
      }),
    },
    responses: {
      200: { description: 'The frame image', contentType: 'image/*' },
      404: { description: 'No frame kept for this caption (never sent, or removed by retention)' },
      422: { description: 'Not a caption id' },
      503: { description: 'The frame store is unavailable' },
    },
    mapError: (error) =>
      error instanceof StorageUnavailableError ? new HttpError(503, 'The frame store is unavailable') : undefined,
    handler: async (ctx) => {
      const frame = await frames.open(ctx.state.params.id);
      if (!frame) throw new HttpError(404, 'No frame is kept for this caption');
      ctx.type = frame.contentType;
      ctx.length = frame.size;
      ctx.set('Cache-Control', 'private, max-age=3600, immutable');
      ctx.body = frame.body;
    },
  });
}
