import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { mediaTypeFromName } from '../../lib/media/index.js';
import type { DataprepServices } from '../runtime/services.js';
import { clientGone } from './client-gone.js';
import {
  bodyTags,
  bucketName,
  detectionConfidence,
  enableObjectDetection,
  errorBody,
  frameInterval,
  resolveBucket,
  statusMessage,
  videoId,
} from './schemas.js';

/** The body of POST /media/process as validated (defaults applied). */
interface ProcessBody {
  bucket_name?: string;
  video_id: string;
  frame_interval: number;
  enable_object_detection: boolean;
  detection_confidence: number;
  tags: string[];
}

/** POST /media/process: embeds the single media file of a directory already in storage. */
export function processMediaRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/media/process',
    summary: 'Process the video (or image) of a stored directory',
    tags: ['media'],
    request: {
      body: Joi.object<ProcessBody, true>({
        bucket_name: bucketName(),
        video_id: videoId().required(),
        frame_interval: frameInterval(),
        enable_object_detection: enableObjectDetection(),
        detection_confidence: detectionConfidence(),
        tags: bodyTags(),
      }),
    },
    responses: {
      201: { description: 'Embeddings created', schema: statusMessage() },
      400: { description: 'Missing or invalid parameters, undecodable media', schema: errorBody() },
      404: { description: 'No video in the directory', schema: errorBody() },
      502: { description: 'Storage failure', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const body = ctx.state.body;
      const bucket = resolveBucket(services, body.bucket_name);
      const media = await services.catalogue.find(bucket, body.video_id);
      if (!media) throw new HttpError(404, `No video found in directory ${body.video_id} of bucket ${bucket}`);
      const type = mediaTypeFromName(media.filename);
      if (!type) throw new HttpError(400, `Stored file ${media.filename} is not a supported media type`);
      const { result } = await services.processing.process({
        source: `${services.basePath}/media/process`,
        requestId: ctx.state.requestId,
        media,
        kind: type.kind,
        options: {
          frameInterval: body.frame_interval,
          detectionEnabled: body.enable_object_detection,
          detectionConfidence: body.detection_confidence,
          tags: body.tags,
        },
        ownsStoredMedia: false,
        enforceDuplicatePolicy: false,
        signal: clientGone(ctx),
      });
      ctx.status = 201;
      ctx.body = {
        status: 'success',
        message: `Embeddings created for video ${media.videoId}: ${result.embeddingsStored} stored`,
      };
    },
  });
}
