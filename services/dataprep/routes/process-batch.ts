import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import type { DataprepServices } from '../services.js';
import { VIDEO_ID_PATTERN } from '../video-ids.js';
import { answerAccepted, assertBatchSize, jobAcceptedSchema } from './batch-common.js';
import {
  bodyTags,
  bucketName,
  detectionConfidence,
  enableObjectDetection,
  errorBody,
  frameInterval,
  resolveBucket,
  videoId,
} from './schemas.js';
import { counted } from '../../lib/wording/index.js';

/** The video ids a request names: its `items`, or every video of the bucket whose id starts with `prefix`. */
async function selectVideos(
  services: DataprepServices,
  bucket: string,
  body: { items?: Array<{ video_id: string }>; prefix?: string },
): Promise<string[]> {
  if (body.items) return body.items.map((item) => item.video_id);
  const prefix = body.prefix ?? '';
  const ids = (await services.catalogue.list(bucket)).map((m) => m.videoId).filter((id) => id.startsWith(prefix));
  // Directories made outside the API may carry names a job item cannot hold.
  const invalid = ids.filter((id) => !VIDEO_ID_PATTERN.test(id));
  if (invalid.length) throw new HttpError(400, `Not a valid video_id, so it cannot be batched: ${invalid[0]}`);
  if (ids.length === 0) {
    throw new HttpError(
      404,
      `No video found in bucket ${bucket}${prefix ? ` with a video_id starting with ${prefix}` : ''}`,
    );
  }
  return ids;
}

/** POST /media/process/batch: re-processes videos already in storage as one background job. */
export function processBatchRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/media/process/batch',
    summary: 'Process stored videos in the background (items or a bucket/prefix selector)',
    description:
      'Give `items` (objects with `video_id`) or `bucket_name` with an optional `prefix`. Items run one after another; an item whose content is owned by another video_id fails with the duplicate message (duplicates disallowed).',
    tags: ['jobs'],
    request: {
      body: Joi.object({
        items: Joi.array()
          .items(Joi.object({ video_id: videoId().required() }))
          .min(1)
          .unique('video_id'),
        bucket_name: bucketName(),
        prefix: Joi.string()
          .max(128)
          .pattern(/^[A-Za-z0-9_-]*$/),
        frame_interval: frameInterval(),
        enable_object_detection: enableObjectDetection(),
        detection_confidence: detectionConfidence(),
        tags: bodyTags(),
      })
        .or('items', 'bucket_name')
        .oxor('items', 'prefix'),
    },
    responses: {
      202: { description: 'Job accepted', schema: jobAcceptedSchema() },
      400: { description: 'Missing or invalid parameters, too many items', schema: errorBody() },
      404: { description: 'The selector matches no video', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const body = ctx.state.body;
      const bucket = resolveBucket(services, body.bucket_name);
      const ids = await selectVideos(services, bucket, body);
      assertBatchSize(services, ids.length, 'videos');
      const job = await services.jobs.create({
        source: 'batch_existing',
        bucket,
        frameInterval: body.frame_interval,
        detection: { enabled: body.enable_object_detection, confidence: body.detection_confidence },
        tags: body.tags,
        storeCopy: true,
        items: ids.map((id) => ({ identifier: id, videoId: id })),
      });
      answerAccepted(ctx, job, `Job accepted: ${counted(ids.length, 'video')} of bucket ${bucket} will be processed`);
    },
  });
}
