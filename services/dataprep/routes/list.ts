import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import type { DataprepServices } from '../services.js';
import { bucketName, errorBody, resolveBucket } from './schemas.js';

/** GET /media: the media of a bucket. */
export function listMediaRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/media',
    summary: 'List the media of a bucket',
    tags: ['media'],
    request: { query: Joi.object({ bucket_name: bucketName() }) },
    responses: {
      200: {
        description: 'Media listing',
        schema: Joi.object({
          status: Joi.string().valid('success'),
          bucket_name: Joi.string(),
          videos: Joi.array().items(
            Joi.object({
              video_id: Joi.string(),
              video_name: Joi.string(),
              video_path: Joi.string(),
              creation_ts: Joi.string().isoDate(),
              stored: Joi.boolean(),
              source_path: Joi.string(),
            }),
          ),
        }),
      },
      400: { description: 'Invalid bucket name', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const bucket = resolveBucket(services, ctx.state.query.bucket_name);
      const media = await services.catalogue.list(bucket);
      ctx.body = {
        status: 'success',
        bucket_name: bucket,
        videos: media.map((m) => ({
          video_id: m.videoId,
          video_name: m.filename,
          video_path: `${bucket}/${m.key}`,
          creation_ts: m.lastModified.toISOString(),
          stored: true,
        })),
      };
    },
  });
}
