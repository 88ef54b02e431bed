import { randomUUID } from 'node:crypto';
import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { mediaTypeFromName } from '../../lib/media/index.js';
import { buildSummaryMetadata } from '../pipeline/index.js';
import type { DataprepServices } from '../runtime/services.js';
import { bodyTags, bucketName, errorBody, resolveBucket, statusMessage, videoId } from './schemas.js';

/** The body of POST /summary as validated (defaults applied). */
interface SummaryBody {
  bucket_name: string;
  video_id: string;
  video_summary: string;
  video_start_time: number;
  video_end_time: number;
  tags: string[];
}

/** POST /summary: embeds a clip's text summary into the summary table/collection. */
export function summaryRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/summary',
    summary: 'Embed and store a text summary of a clip',
    tags: ['summary'],
    request: {
      body: Joi.object<SummaryBody, true>({
        bucket_name: bucketName().required(),
        video_id: videoId().required(),
        video_summary: Joi.string().trim().min(1).max(100_000).required().messages({
          'string.empty': 'video_summary must not be empty',
        }),
        video_start_time: Joi.number().min(0).required(),
        video_end_time: Joi.number()
          .required()
          .greater(Joi.ref('video_start_time'))
          .messages({ 'number.greater': 'video_end_time must be greater than video_start_time' }),
        tags: bodyTags(),
      }),
    },
    responses: {
      201: { description: 'Summary embedding created', schema: statusMessage() },
      400: { description: 'Invalid time range, empty summary or video not found', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const body = ctx.state.body;
      const bucket = resolveBucket(services, body.bucket_name);
      const media = await services.catalogue.find(bucket, body.video_id);
      // The contract answers a missing video with 400 here, not 404.
      if (!media) throw new HttpError(400, `Video ${body.video_id} not found in bucket ${bucket}`);
      const [vector] = await services.models.textEmbedder.embed([body.video_summary]);
      await services.textVectorStore.insert([
        {
          id: randomUUID(),
          vector,
          metadata: buildSummaryMetadata(
            {
              bucketName: bucket,
              videoId: media.videoId,
              filename: media.filename,
              mediaType: mediaTypeFromName(media.filename)?.kind ?? 'video',
              // Summaries do not decode the video: its sampling facts are unknown here and recorded as 0.
              frameInterval: 1,
              fps: 0,
              totalFrames: 0,
              durationSeconds: 0,
              tags: body.tags,
              uploadedAt: media.lastModified.toISOString(),
              videoUrl: `${services.basePath}/media/download?${new URLSearchParams({ bucket_name: bucket, video_id: media.videoId })}`,
            },
            { startSeconds: body.video_start_time, endSeconds: body.video_end_time, summary: body.video_summary },
            new Date().toISOString(),
          ),
        },
      ]);
      ctx.status = 201;
      ctx.body = {
        status: 'success',
        message: `Summary embedding created for video ${media.videoId} (${body.video_start_time}s to ${body.video_end_time}s)`,
      };
    },
  });
}
