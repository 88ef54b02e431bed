import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import type { IngestItem } from '../../../operator/api/index.js';
import { itemIdentifier } from '../jobs/ingest-jobs.js';
import type { DataprepServices } from '../runtime/services.js';
import { VIDEO_ID_PATTERN } from '../media/video-ids.js';
import { answerAccepted, assertBatchSize, assertRunnableItem, jobAcceptedSchema } from './batch-common.js';
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

/** The body of POST /media/process/batch as validated (defaults applied): `items`, or a bucket and prefix. */
interface ProcessBatchBody {
  items?: Array<{ video_id: string }>;
  bucket_name?: string;
  prefix?: string;
  frame_interval: number;
  enable_object_detection: boolean;
  detection_confidence: number;
  tags: string[];
}

/**
 * The job items of a request: its `items`, or every video of the bucket whose id starts with `prefix`. A directory
 * made outside the API whose name a video_id cannot take is a refused item: it fails alone in the job.
 */
async function selectVideos(
  services: DataprepServices,
  bucket: string,
  body: Pick<ProcessBatchBody, 'items' | 'prefix'>,
): Promise<IngestItem[]> {
  if (body.items) return body.items.map((item) => ({ identifier: item.video_id, videoId: item.video_id }));
  const prefix = body.prefix ?? '';
  const ids = (await services.catalogue.list(bucket)).map((m) => m.videoId).filter((id) => id.startsWith(prefix));
  if (ids.length === 0) {
    throw new HttpError(
      404,
      `No video found in bucket ${bucket}${prefix ? ` with a video_id starting with ${prefix}` : ''}`,
    );
  }
  return ids.map((id) =>
    VIDEO_ID_PATTERN.test(id)
      ? { identifier: id, videoId: id }
      : {
          identifier: itemIdentifier(id),
          refused: 'Not a valid video_id (a directory made outside the API), so it cannot be processed',
        },
  );
}

/** POST /media/process/batch: re-processes videos already in storage as one background job. */
export function processBatchRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/media/process/batch',
    summary: 'Process stored videos in the background (items or a bucket/prefix selector)',
    description:
      'Give `items` (objects with `video_id`) or `bucket_name` with an optional `prefix`. Items run one after another. Per-item error isolation: a video that is not found, cannot be processed, or whose content is owned by another video_id (duplicates disallowed) ends `error` in the job while the others run; so does a directory the selector finds whose name is not a valid video_id. Refused at submit is only a request that is itself invalid (400: invalid fields, an item whose video_id is not a video id, too many items) and a selector that matches nothing (404).',
    tags: ['jobs'],
    request: {
      body: Joi.object<ProcessBatchBody, true>({
        items: Joi.array()
          .items(Joi.object<{ video_id: string }, true>({ video_id: videoId().required() }))
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
      const items = await selectVideos(services, bucket, body);
      assertBatchSize(services, items.length, 'videos');
      assertRunnableItem(items);
      const job = await services.jobs.create({
        source: 'batch_existing',
        bucket,
        frameInterval: body.frame_interval,
        detection: { enabled: body.enable_object_detection, confidence: body.detection_confidence },
        tags: body.tags,
        storeCopy: true,
        items,
      });
      const runnable = items.filter((item) => !item.refused).length;
      answerAccepted(ctx, job, `Job accepted: ${counted(runnable, 'video')} of bucket ${bucket} will be processed`);
    },
  });
}
