import Joi from 'joi';
import { defineRoute, HttpError, type RouteContext, type RouteSpec, type Undeclared } from '../../lib/http/index.js';
import { ACCEPTED_EXTENSIONS, withDetectedExtension, type MediaType } from '../../lib/media/index.js';
import { ObjectTooLargeError } from '../../lib/storage/index.js';
import { MediaCatalogue, type StoredMedia } from '../media/catalogue.js';
import { claimedMediaType, sniffMediaType } from '../media/media-kinds.js';
import { multipartUpload, type IncomingFile } from '../uploads/multipart-upload.js';
import type { DataprepServices } from '../runtime/services.js';
import { storeWithLocalCopy, type TempMedia } from '../media/temp-media.js';
import { uploadAbortReason } from '../uploads/upload-metrics.js';
import { newVideoId, safeFilename } from '../media/video-ids.js';
import { clientGone } from './client-gone.js';
import { errorBody, resolveTargetBucket, statusMessage, uploadQuery, type UploadQuery } from './schemas.js';
import { counted } from '../../lib/wording/index.js';

/** Message of 400 answers for unsupported files. */
export const UNSUPPORTED_MEDIA_MESSAGE = `Unsupported media type: accepted are ${ACCEPTED_EXTENSIONS.map((e) => `.${e}`).join(', ')} (videos must be MP4)`;

/** A received and stored upload, with the local copy the pipeline reads. */
interface ReceivedUpload {
  media: StoredMedia;
  type: MediaType;
  local: TempMedia;
}

async function receiveUpload(
  services: DataprepServices,
  ctx: RouteContext<unknown, unknown, unknown>,
  bucket: string,
  signal: AbortSignal,
): Promise<ReceivedUpload> {
  const videoId = newVideoId();
  const maxBytes = services.limits.uploadMaxBytes;
  return multipartUpload(ctx.req, 'file', receive, signal);

  async function receive(file: IncomingFile): Promise<ReceivedUpload> {
    const claimed = claimedMediaType(file.filename, file.mimeType);
    if (!claimed) throw new HttpError(400, UNSUPPORTED_MEDIA_MESSAGE);
    const { type, stream } = await sniffMediaType(file.stream);
    // The name or declared type says which kind; the bytes must confirm it (a text file named .mp4 is refused).
    if (!type || type.kind !== claimed.kind) {
      stream.destroy();
      throw new HttpError(400, `${UNSUPPORTED_MEDIA_MESSAGE}; the file content is not a supported ${claimed.kind}`);
    }
    const filename = withDetectedExtension(safeFilename(file.filename, `media.${type.ext}`), type);
    const key = MediaCatalogue.keyOf(videoId, filename);
    try {
      const { size, local } = await storeWithLocalCopy(
        stream,
        services.objectStore,
        { bucket, key, contentType: type.mime, maxBytes },
        services.tempDir,
      );
      const media: StoredMedia = {
        bucket,
        videoId,
        key,
        filename,
        size,
        lastModified: new Date(),
        contentType: type.mime,
      };
      return { media, type, local };
    } catch (error) {
      if (error instanceof ObjectTooLargeError) {
        throw new HttpError(413, `File too large: the limit is ${Math.floor(maxBytes / (1024 * 1024))} MB`);
      }
      throw error;
    }
  }
}

/** Stores, then embeds one upload; every stage stops on `signal` and removes what it made. */
async function storeAndProcess(
  services: DataprepServices,
  ctx: RouteContext<Undeclared, UploadQuery, Undeclared>,
  signal: AbortSignal,
): Promise<void> {
  const q = ctx.state.query;
  const bucket = resolveTargetBucket(services, q.bucket_name);
  // A refusal leaves the rest of the body unread: the HTTP kit drops it (or closes gracefully) after answering.
  const upload = await receiveUpload(services, ctx, bucket, signal);
  try {
    const { result } = await services.processing.process({
      source: `${services.basePath}/media/upload`,
      requestId: ctx.state.requestId,
      media: upload.media,
      kind: upload.type.kind,
      local: upload.local,
      options: {
        // Images have no frames: the interval is ignored for them.
        frameInterval: q.frame_interval,
        detectionEnabled: q.enable_object_detection,
        detectionConfidence: q.detection_confidence,
        tags: q.tags,
      },
      ownsStoredMedia: true,
      enforceDuplicatePolicy: true,
      signal,
    });
    ctx.status = 201;
    ctx.body = {
      status: 'success',
      message: `Uploaded ${upload.media.filename} as video_id ${upload.media.videoId}; ${counted(result.embeddingsStored, 'embedding')} created`,
      video_id: upload.media.videoId,
      bucket_name: bucket,
    };
  } finally {
    await upload.local.remove();
  }
}

/** POST /media/upload: stores a multipart file (streamed, hashed on the way) and embeds it. */
export function uploadMediaRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/media/upload',
    summary: 'Upload a video (MP4) or image and create its embeddings',
    description:
      'The file is streamed to storage; the media type comes from the extension or content type and is confirmed from the first bytes.',
    tags: ['media'],
    request: {
      query: uploadQuery(),
      multipart: Joi.object({
        file: Joi.any()
          .meta({
            swaggerType: 'file',
            contentType: 'video/mp4, image/jpeg, image/png, image/webp, image/bmp, image/gif',
          })
          .required()
          .description('MP4 video or image'),
      }),
    },
    responses: {
      201: {
        description: 'Stored and embedded',
        schema: statusMessage().keys({ video_id: Joi.string().required(), bucket_name: Joi.string().required() }),
      },
      400: { description: 'Unsupported media type or failed validation', schema: errorBody() },
      409: { description: 'Identical content exists (duplicates disallowed)', schema: errorBody() },
      413: { description: 'File too large', schema: errorBody() },
      502: { description: 'Storage failure', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const signal = clientGone(ctx);
      try {
        await storeAndProcess(services, ctx, signal);
      } catch (error) {
        // Counted here, after every stage has cleaned up, so the metric means "stopped and nothing left behind".
        if (signal.aborted) services.uploadsAborted.inc({ reason: uploadAbortReason(signal.reason) });
        throw error;
      }
    },
  });
}
