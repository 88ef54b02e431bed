import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import type { DataprepServices } from '../runtime/services.js';
import { bucketName, errorBody, resolveBucket, statusMessage, videoId } from './schemas.js';
import { counted } from '../../lib/wording/index.js';

const byBucket = (bucket: string) => ({ equals: { bucket_name: bucket } });
const byVideo = (bucket: string, id: string) => ({ equals: { bucket_name: bucket, video_id: id } });

/** DELETE /media/{bucket_name}: embeddings first, then stored media and content markers. */
export function deleteBucketRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'delete',
    path: '/media/:bucket_name',
    summary: 'Clear a bucket: embeddings, then stored media',
    tags: ['media'],
    request: { params: Joi.object<{ bucket_name: string }, true>({ bucket_name: bucketName().required() }) },
    responses: {
      200: { description: 'Bucket cleared', schema: statusMessage() },
      400: { description: 'Invalid bucket name', schema: errorBody() },
      502: { description: 'Storage or vector database failed', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const bucket = resolveBucket(services, ctx.state.params.bucket_name);
      const embeddings =
        (await services.vectorStore.delete(byBucket(bucket))) +
        (await services.textVectorStore.delete(byBucket(bucket))) +
        (await services.descriptionStore.delete(byBucket(bucket)));
      const removed = await services.catalogue.removeBucket(bucket);
      await services.references.removeBucket(bucket);
      await services.markers.removeBucket(bucket);
      ctx.body = {
        status: 'success',
        message: `Deleted ${counted(embeddings, 'embedding')} of bucket ${bucket} and removed ${counted(removed, 'stored item')}`,
      };
    },
  });
}

/** DELETE /media/{bucket_name}/{video_id}: the video's embeddings first, then its stored file and markers. */
export function deleteVideoRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'delete',
    path: '/media/:bucket_name/:video_id',
    summary: 'Delete one video: embeddings, then stored file',
    tags: ['media'],
    request: {
      params: Joi.object<{ bucket_name: string; video_id: string }, true>({
        bucket_name: bucketName().required(),
        video_id: videoId().required(),
      }),
    },
    responses: {
      200: { description: 'Video deleted', schema: statusMessage() },
      400: { description: 'Invalid parameters', schema: errorBody() },
      404: { description: 'Bucket or video not found', schema: errorBody() },
      502: { description: 'Storage or vector database failed', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const id = ctx.state.params.video_id;
      const bucket = resolveBucket(services, ctx.state.params.bucket_name);
      const media = await services.catalogue.find(bucket, id);
      // A video referenced in place can be deleted even when its file has gone; the file itself is never touched.
      if (!media && !(await services.references.find(bucket, id))) {
        throw new HttpError(404, `Video ${id} not found in bucket ${bucket}`);
      }
      await services.vectorStore.delete(byVideo(bucket, id));
      await services.textVectorStore.delete(byVideo(bucket, id));
      await services.descriptionStore.delete(byVideo(bucket, id));
      await services.catalogue.removeVideo(bucket, id);
      await services.references.remove(bucket, id);
      await services.markers.removeVideo(bucket, id);
      ctx.body = { status: 'success', message: `Video ${id} deleted from bucket ${bucket}` };
    },
  });
}
