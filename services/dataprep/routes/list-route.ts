import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { InvalidPageTokenError, type StoredMedia } from '../media/catalogue.js';
import { withReferencedMedia } from '../media/media-access.js';
import type { DataprepServices } from '../runtime/services.js';
import { bucketName, errorBody, resolveBucket } from './schemas.js';

/** The largest page `limit` accepts. */
export const MAX_PAGE_SIZE = 1000;

/** The query of GET /media as validated. */
interface ListQuery {
  bucket_name?: string;
  limit?: number;
  page_token?: string;
}

/** Every media item oldest first, or with `limit` one page in video_id order (extension for large buckets). */
async function listed(services: DataprepServices, bucket: string, query: ListQuery) {
  if (query.limit === undefined) return { media: await services.catalogue.list(bucket) };
  try {
    return await services.catalogue.listPage(bucket, query.limit, query.page_token);
  } catch (error) {
    if (error instanceof InvalidPageTokenError) throw new HttpError(400, error.message);
    throw error;
  }
}

/** GET /media: the media of a bucket. */
export function listMediaRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/media',
    summary: 'List the media of a bucket',
    tags: ['media'],
    description:
      'Without `limit`, every item, oldest first (the contract). With `limit`, one page in video_id order and ' +
      '`next_page_token` while more follow; pass it back as `page_token` for the next page.',
    request: {
      query: Joi.object<ListQuery, true>({
        bucket_name: bucketName(),
        limit: Joi.number().integer().min(1).max(MAX_PAGE_SIZE).description('Page size (extension)'),
        page_token: Joi.string().max(512).description('`next_page_token` of the previous page (needs `limit`)'),
      }).with('page_token', 'limit'),
    },
    responses: {
      200: {
        description: 'Media listing',
        schema: Joi.object({
          status: Joi.string().valid('success').required(),
          bucket_name: Joi.string().required(),
          videos: Joi.array()
            .items(
              Joi.object({
                video_id: Joi.string().required(),
                video_name: Joi.string().required(),
                video_path: Joi.string().required(),
                creation_ts: Joi.string().isoDate().required(),
                stored: Joi.boolean().required(),
                source_path: Joi.string(),
              }),
            )
            .required(),
          next_page_token: Joi.string().description('Present when `limit` was given and more items follow'),
        }),
      },
      400: { description: 'Invalid bucket name, limit or page_token', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const bucket = resolveBucket(services, ctx.state.query.bucket_name);
      const { media, nextPageToken } = await listed(services, bucket, ctx.state.query);
      const stored = media.map((m: StoredMedia) => ({
        video_id: m.videoId,
        video_name: m.filename,
        video_path: `${bucket}/${m.key}`,
        creation_ts: m.lastModified.toISOString(),
        stored: true,
      }));
      ctx.body = {
        status: 'success',
        bucket_name: bucket,
        // Media referenced in place (ingest-dir with store_copy=false) whose file is still readable.
        videos: await withReferencedMedia(services, bucket, stored, {
          paged: ctx.state.query.limit !== undefined,
          morePages: nextPageToken !== undefined,
        }),
        ...(nextPageToken ? { next_page_token: nextPageToken } : {}),
      };
    },
  });
}
