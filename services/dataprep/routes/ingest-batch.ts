import path from 'node:path';
import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { ACCEPTED_IMAGE_EXTENSIONS, detectMediaType, withDetectedExtension } from '../../lib/media/index.js';
import { ITEM_URL_MAX, type IngestItem } from '../../../operator/api/index.js';
import { itemIdentifier } from '../jobs/ingest-jobs.js';
import { MediaCatalogue } from '../catalogue.js';
import { decodeBase64Image } from '../image-source.js';
import type { DataprepServices } from '../services.js';
import { newVideoId, safeFilename } from '../video-ids.js';
import { answerAccepted, assertBatchSize, jobAcceptedSchema } from './batch-common.js';
import { imageSourceSchema } from './ingest.js';
import {
  bodyTags,
  bucketName,
  detectionConfidence,
  enableObjectDetection,
  errorBody,
  resolveTargetBucket,
} from './schemas.js';
import { counted } from '../../lib/wording/index.js';

/** A typed image source of the request, with its position. */
interface ImageRequestItem {
  type: 'image_base64' | 'image_url';
  image_base64?: string;
  image_url?: string;
  filename?: string;
}

/** The label of a URL item: the given file name, else the URL's last path segment, else the URL. */
function urlItemLabel(item: ImageRequestItem): string {
  if (item.filename) return item.filename;
  try {
    const last = path.posix.basename(new URL(item.image_url!).pathname);
    if (last) return last;
  } catch {
    // an invalid URL fails in the job with its own message
  }
  return item.image_url!;
}

/**
 * Decodes, checks and stores the base64 items (so a malformed one refuses the whole request before anything runs),
 * and turns every item into a job item; URL items are downloaded by the worker. Stored objects are removed again when
 * a later item is refused or storing fails.
 */
async function prepareItems(services: DataprepServices, bucket: string, images: ImageRequestItem[]) {
  const stored: string[] = [];
  const items: IngestItem[] = [];
  try {
    for (const [index, image] of images.entries()) {
      const videoId = newVideoId();
      if (image.type === 'image_url') {
        if (image.image_url!.length > ITEM_URL_MAX) {
          throw new HttpError(400, `images[${index}]: image_url is longer than ${ITEM_URL_MAX} characters`);
        }
        items.push({ identifier: itemIdentifier(urlItemLabel(image)), videoId, url: image.image_url });
        continue;
      }
      const where = `images[${index}]`;
      let bytes: Buffer;
      try {
        bytes = decodeBase64Image(image.image_base64!, services.limits.ingestMaxBytes);
      } catch (error) {
        if (error instanceof HttpError) throw new HttpError(error.status, `${where}: ${error.message}`);
        throw error;
      }
      const type = await detectMediaType(bytes);
      if (!type || type.kind !== 'image') {
        throw new HttpError(
          400,
          `${where}: unsupported or undecodable image (accepted formats: ${ACCEPTED_IMAGE_EXTENSIONS.join(', ')})`,
        );
      }
      const filename = withDetectedExtension(safeFilename(image.filename, `image.${type.ext}`), type);
      const key = MediaCatalogue.keyOf(videoId, filename);
      stored.push(videoId);
      await services.objectStore.put(bucket, key, bytes, { contentType: type.mime });
      items.push({ identifier: itemIdentifier(image.filename ?? filename), videoId, key });
    }
    return { items, stored };
  } catch (error) {
    await removeStored(services, bucket, stored);
    throw error;
  }
}

async function removeStored(services: DataprepServices, bucket: string, videoIds: string[]): Promise<void> {
  for (const videoId of videoIds) await services.catalogue.removeVideo(bucket, videoId).catch(() => undefined);
}

/** POST /media/ingest/batch: images from base64 or URLs, embedded by a background job. */
export function ingestBatchRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/media/ingest/batch',
    summary: 'Ingest images from base64 or http(s) URLs in the background',
    description:
      'base64 images are decoded, checked and stored when the request arrives (a bad one refuses the whole request); URL images are downloaded by the job, and a failed download fails only its item.',
    tags: ['jobs'],
    request: {
      body: Joi.object({
        images: Joi.array()
          .items(imageSourceSchema().keys({ filename: Joi.string().max(255) }))
          .min(1)
          .required(),
        bucket_name: bucketName(),
        enable_object_detection: enableObjectDetection(),
        detection_confidence: detectionConfidence(),
        tags: bodyTags(),
      }),
    },
    responses: {
      202: { description: 'Job accepted', schema: jobAcceptedSchema() },
      400: { description: 'Invalid parameters, too many items, a bad base64 image', schema: errorBody() },
      413: { description: 'A base64 image over the 50 MB cap', schema: errorBody() },
      502: { description: 'Storage failure', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const body = ctx.state.body;
      const bucket = resolveTargetBucket(services, body.bucket_name);
      assertBatchSize(services, body.images.length, 'images');
      const { items, stored } = await prepareItems(services, bucket, body.images);
      try {
        const job = await services.jobs.create({
          source: 'image_batch',
          bucket,
          frameInterval: 1,
          detection: { enabled: body.enable_object_detection, confidence: body.detection_confidence },
          tags: body.tags,
          storeCopy: true,
          items,
        });
        answerAccepted(
          ctx,
          job,
          `Job accepted: ${counted(items.length, 'image')} will be ingested into bucket ${bucket}`,
        );
      } catch (error) {
        await removeStored(services, bucket, stored);
        throw error;
      }
    },
  });
}
