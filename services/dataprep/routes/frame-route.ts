import Joi from 'joi';
import { defineRoute, HttpError, type ErrorMapping, type RouteSpec } from '../../lib/http/index.js';
import { ObjectNotFoundError, StorageUnavailableError } from '../../lib/storage/index.js';
import { mapDataprepError } from '../errors.js';
import { findFrameMedia } from '../frames/frame-media.js';
import {
  FrameTimeoutError,
  MAX_FRAME_WIDTH,
  MIN_FRAME_WIDTH,
  PastEndError,
  UndecodableFrameError,
} from '../frames/frame-service.js';
import type { DataprepServices } from '../runtime/services.js';
import { clientGone } from './client-gone.js';
import { bucketName, errorBody, resolveBucket, videoId } from './schemas.js';

/** How long clients may reuse a frame before revalidating it with its ETag. */
const FRAME_MAX_AGE_SECONDS = 300;

/**
 * Frame failures first (past the end and undecodable 400, time-out 504, a file gone between lookup and read 404),
 * then dataprep's backend mapping.
 */
const mapFrameError: ErrorMapping = (error) => {
  if (error instanceof ObjectNotFoundError) return new HttpError(404, 'Video not found');
  if (error instanceof PastEndError) return new HttpError(400, error.message);
  if (error instanceof UndecodableFrameError) return new HttpError(400, error.message);
  if (error instanceof FrameTimeoutError) return new HttpError(504, error.message);
  return mapDataprepError(error);
};

/** The query of GET /media/frame as validated. */
interface FrameQuery {
  video_id: string;
  bucket_name?: string;
  t: number;
  width?: number;
}

/** GET /media/frame: a JPEG of the frame a stored or referenced media item shows at `t` seconds. */
export function frameRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/media/frame',
    summary: 'A JPEG of any moment of a video (an image answers itself, resized)',
    description:
      `The frame on screen at \`t\` (the last one starting at or before it; \`t\` up to the video's duration ` +
      `answers the last frame, beyond it 400). \`width\` ${MIN_FRAME_WIDTH}–${MAX_FRAME_WIDTH} (height keeps the ` +
      `aspect ratio); default the media's own width, at most ${MAX_FRAME_WIDTH}. For an image, \`t\` is ignored. ` +
      `Answers carry an ETag (If-None-Match → 304) and Cache-Control max-age=${FRAME_MAX_AGE_SECONDS}.`,
    tags: ['media'],
    request: {
      query: Joi.object<FrameQuery, true>({
        video_id: videoId().required(),
        bucket_name: bucketName(),
        t: Joi.number().min(0).max(1e7).required().description('Seconds from the start of the video'),
        width: Joi.number().integer().min(MIN_FRAME_WIDTH).max(MAX_FRAME_WIDTH).description('Output width in pixels'),
      }),
      headers: { 'If-None-Match': 'ETag of a frame the client holds (answered 304 when unchanged)' },
    },
    responses: {
      200: { description: 'The frame as a JPEG', contentType: 'image/jpeg' },
      304: { description: 'Not modified (If-None-Match matched)' },
      400: { description: 'Invalid parameter, t past the end, or media that cannot be decoded', schema: errorBody() },
      404: { description: 'Video or bucket not found', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
      502: { description: 'Storage backend unavailable', schema: errorBody() },
      503: { description: 'The server is stopping before the frame was ready', schema: errorBody() },
      504: { description: 'Rendering the frame took too long', schema: errorBody() },
    },
    mapError: mapFrameError,
    handler: async (ctx) => {
      const { video_id: id, t, width } = ctx.state.query;
      const bucket = resolveBucket(services, ctx.state.query.bucket_name);
      const signal = clientGone(ctx);
      const media = await findFrameMedia(services, bucket, id);
      if (!media) throw new HttpError(404, `Video ${id} not found in bucket ${bucket}`);
      let frame;
      try {
        frame = await services.frames.render(media, { t, width }, signal);
      } catch (error) {
        // Nobody reads this answer (the client left) or the server is stopping: no failure worth logging.
        if (signal.aborted) throw new HttpError(503, 'The request ended before the frame was ready');
        if (error instanceof UndecodableFrameError || error instanceof StorageUnavailableError) {
          // The answer says only what failed; ffmpeg's words (paths and URLs already cut out) go to the log.
          services.logger.warn('frame render failed', {
            requestId: ctx.state.requestId,
            bucket_name: bucket,
            video_id: id,
            error: error instanceof UndecodableFrameError ? error.detail : error.message,
          });
        }
        throw error;
      }
      ctx.set('Cache-Control', `max-age=${FRAME_MAX_AGE_SECONDS}`);
      ctx.set('ETag', frame.etag);
      ctx.status = 200;
      if (ctx.fresh) {
        ctx.status = 304;
        return;
      }
      ctx.type = 'image/jpeg';
      ctx.body = frame.jpeg;
    },
  });
}
