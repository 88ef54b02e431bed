import type { Readable } from 'node:stream';
import Joi from 'joi';
import { defineRoute, HttpError, type RouteContext, type RouteSpec } from '../../lib/http/index.js';
import { withDetectedExtension } from '../../lib/media/index.js';
import { ObjectTooLargeError } from '../../lib/storage/index.js';
import type { IngestItem } from '../../../operator/api/index.js';
import { MediaCatalogue } from '../media/catalogue.js';
import { liveContentOwner } from '../media/content-owners.js';
import { claimedMediaType, sniffMediaType } from '../media/media-kinds.js';
import { multipartFiles, type IncomingFile } from '../uploads/multipart-upload.js';
import { duplicateMessage } from '../errors.js';
import type { DataprepServices } from '../runtime/services.js';
import { uploadAbortReason } from '../uploads/upload-metrics.js';
import { newVideoId, safeFilename } from '../media/video-ids.js';
import { answerAccepted, assertRunnableItem, jobAcceptedSchema } from './batch-common.js';
import { clientGone } from './client-gone.js';
import { errorBody, resolveTargetBucket, uploadQuery } from './schemas.js';
import { counted } from '../../lib/wording/index.js';

/** One file of the batch: stored (with its hash), or refused (not an MP4), which fails alone in the job. */
interface StoredUpload {
  item: IngestItem;
  sha256?: string;
}

/** Message of 400 answers for anything but MP4. */
const MP4_ONLY = 'Unsupported media type: upload/batch accepts MP4 videos only';

/**
 * Stores every `files` part as it streams in (hashed on the way, never buffered whole), each under a new video_id.
 * `stored` collects the video ids written so far, so the caller can remove them when the request fails.
 */
async function storeFiles(
  services: DataprepServices,
  ctx: RouteContext<unknown, unknown, unknown>,
  bucket: string,
  stored: string[],
  signal: AbortSignal,
): Promise<StoredUpload[]> {
  const maxBytes = services.limits.uploadMaxBytes;
  const storeOne = async (file: IncomingFile, index: number): Promise<StoredUpload> => {
    const where = `files[${index}] (${safeFilename(file.filename, 'unnamed')})`;
    const identifier = safeFilename(file.filename, `files[${index}]`);
    // The rest of a refused part is drained: the files after it are still read and stored.
    const refuse = (stream: Readable, refused: string) => {
      stream.resume();
      return { item: { identifier, refused } };
    };
    const claimed = claimedMediaType(file.filename, file.mimeType);
    if (claimed?.kind !== 'video') return refuse(file.stream, MP4_ONLY);
    const { type, stream } = await sniffMediaType(file.stream);
    if (type?.kind !== 'video') return refuse(stream, `${MP4_ONLY}; the file content is not an MP4 video`);
    const videoId = newVideoId();
    const filename = withDetectedExtension(safeFilename(file.filename, `video.${type.ext}`), type);
    const key = MediaCatalogue.keyOf(videoId, filename);
    stored.push(videoId);
    try {
      const { sha256 } = await services.objectStore.put(bucket, key, stream, { contentType: type.mime, maxBytes });
      return { item: { identifier: filename, videoId, key }, sha256 };
    } catch (error) {
      if (error instanceof ObjectTooLargeError) {
        throw new HttpError(413, `${where}: file too large: the limit is ${Math.floor(maxBytes / (1024 * 1024))} MB`);
      }
      throw error;
    }
  };
  return multipartFiles(ctx.req, 'files', storeOne, {
    maxFiles: services.config.batchMaxItems,
    beyondMax: 'refuse',
    signal,
  });
}

/** 409 when any file is identical to media that is already ingested (duplicates disallowed). */
async function assertNoDuplicates(services: DataprepServices, uploads: StoredUpload[]): Promise<void> {
  if (services.config.allowDuplicateUploads) return;
  for (const upload of uploads) {
    if (upload.sha256 === undefined) continue;
    const owner = await liveContentOwner(services, upload.sha256);
    if (owner) {
      throw new HttpError(409, `${upload.item.identifier}: ${duplicateMessage(owner.bucket_name, owner.video_id)}`);
    }
  }
}

/** POST /media/upload/batch: stores MP4 files (streamed), then embeds them in one background job. */
export function uploadBatchRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/media/upload/batch',
    summary: 'Upload MP4 videos and embed them in the background',
    description:
      'Repeat the form field `files` per MP4. Every file is stored first; then one job embeds them one after another. Per-item error isolation: a file that is not an MP4 is not stored and ends `error` in the job with its message while the others are embedded. Refused at submit is only a request that is itself invalid (400: not a multipart form, a body cut short, no `files` part, a file part under another field name, more files than a batch holds), a file over the size cap (413: the body is over it too), and, with duplicates disallowed, a file identical to ingested media (409, as the contract says; nothing is kept).',
    tags: ['jobs'],
    request: {
      query: uploadQuery(),
      multipart: Joi.object({
        files: Joi.array()
          .items(Joi.any().meta({ swaggerType: 'file', contentType: 'video/mp4' }))
          .required()
          .description('MP4 videos'),
      }),
    },
    responses: {
      202: { description: 'Files stored, job accepted', schema: jobAcceptedSchema() },
      400: { description: 'Not a form, no files, too many files, invalid parameters', schema: errorBody() },
      409: { description: 'A file is identical to ingested media (duplicates disallowed)', schema: errorBody() },
      413: { description: 'A file is too large', schema: errorBody() },
      502: { description: 'Storage failure', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const q = ctx.state.query;
      const bucket = resolveTargetBucket(services, q.bucket_name);
      const signal = clientGone(ctx);
      const stored: string[] = [];
      try {
        // A refusal leaves the rest of the body unread: the HTTP kit drops it (or closes gracefully) after answering.
        const uploads = await storeFiles(services, ctx, bucket, stored, signal);
        assertRunnableItem(uploads.map((u) => u.item));
        await assertNoDuplicates(services, uploads);
        const job = await services.jobs.create({
          source: 'upload_batch',
          bucket,
          frameInterval: q.frame_interval,
          detection: { enabled: q.enable_object_detection, confidence: q.detection_confidence },
          tags: q.tags,
          storeCopy: true,
          items: uploads.map((u) => u.item),
        });
        answerAccepted(
          ctx,
          job,
          `Job accepted: ${counted(stored.length, 'file')} stored in bucket ${bucket} will be embedded`,
        );
      } catch (error) {
        for (const videoId of stored) {
          await services.catalogue.removeVideo(bucket, videoId).catch((cleanupError: Error) =>
            services.logger.error('removing a stored batch upload failed', {
              requestId: ctx.state.requestId,
              bucket,
              videoId,
              error: cleanupError.message,
            }),
          );
        }
        if (signal.aborted) services.uploadsAborted.inc({ reason: uploadAbortReason(signal.reason) });
        throw error;
      }
    },
  });
}
