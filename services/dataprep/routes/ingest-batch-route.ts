import path from 'node:path';
import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import { ACCEPTED_IMAGE_EXTENSIONS, detectMediaType, type MediaType } from '../../lib/media/index.js';
import { ITEM_URL_MAX, type IngestItem } from '../../../operator/api/index.js';
import { DataprepError } from '../errors.js';
import { itemIdentifier } from '../jobs/ingest-jobs.js';
import { MediaCatalogue } from '../media/catalogue.js';
import { decodeBase64Image } from '../ingest/image-source.js';
import type { DataprepServices } from '../runtime/services.js';
import { newVideoId } from '../media/video-ids.js';
import { imageFilename } from '../ingest/stored-image.js';
import { answerAccepted, assertBatchSize, assertRunnableItem, jobAcceptedSchema } from './batch-common.js';
import { imageSourceKeys, type ImageSourceFields } from './ingest-route.js';
import {
  bodyTags,
  bucketName,
  detectionConfidence,
  enableObjectDetection,
  errorBody,
  resolveTargetBucket,
} from './schemas.js';
import { counted } from '../../lib/wording/index.js';

/** A typed image source of the request, with its file name. */
interface ImageRequestItem extends ImageSourceFields {
  filename?: string;
}

/** The body of POST /media/ingest/batch as validated (defaults applied). */
interface IngestBatchBody {
  images: ImageRequestItem[];
  bucket_name?: string;
  enable_object_detection: boolean;
  detection_confidence: number;
  tags: string[];
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

/** Why a base64 item cannot be ingested (not base64, empty, over the cap, not a supported image), or its bytes. */
async function decodeItem(
  services: DataprepServices,
  image: ImageRequestItem,
): Promise<{ bytes: Buffer; type: MediaType } | { refused: string }> {
  let bytes: Buffer;
  try {
    bytes = decodeBase64Image(image.image_base64!, services.limits.ingestMaxBytes);
  } catch (error) {
    if (error instanceof DataprepError) return { refused: error.message };
    throw error;
  }
  const type = await detectMediaType(bytes);
  if (!type || type.kind !== 'image') {
    return { refused: `unsupported or undecodable image (accepted formats: ${ACCEPTED_IMAGE_EXTENSIONS.join(', ')})` };
  }
  return { bytes, type };
}

/**
 * Turns every image into a job item: a base64 one is decoded, checked and stored now, a URL one is downloaded by the
 * job. An item that cannot be ingested (undecodable, unsupported, over the cap, a URL too long to keep) becomes a
 * `refused` item that fails alone in the job. Stored objects are removed again when storing a later one fails.
 */
async function prepareItems(services: DataprepServices, bucket: string, images: ImageRequestItem[]) {
  const stored: string[] = [];
  const items: IngestItem[] = [];
  try {
    for (const [index, image] of images.entries()) {
      const label = image.filename ?? `images[${index}]`;
      if (image.type === 'image_url') {
        const videoId = newVideoId();
        const identifier = itemIdentifier(urlItemLabel(image));
        if (image.image_url!.length > ITEM_URL_MAX) {
          items.push({ identifier, refused: `image_url is longer than ${ITEM_URL_MAX} characters` });
        } else items.push({ identifier, videoId, url: image.image_url });
        continue;
      }
      const decoded = await decodeItem(services, image);
      if ('refused' in decoded) {
        items.push({ identifier: itemIdentifier(label), refused: decoded.refused });
        continue;
      }
      const videoId = newVideoId();
      const filename = imageFilename(decoded.type, image.filename);
      const key = MediaCatalogue.keyOf(videoId, filename);
      stored.push(videoId);
      await services.objectStore.put(bucket, key, decoded.bytes, { contentType: decoded.type.mime });
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
      'base64 images are decoded, checked and stored when the request arrives; URL images are downloaded by the job. Per-item error isolation: an image that cannot be ingested (not base64, over the 50 MB cap, not a supported image, a failed download) ends `error` in the job with its message while the others are ingested. Refused at submit (400) is only a request that is itself invalid: `images` not a non-empty list, too many items, an item without a valid `type`, a source field missing or of the wrong type.',
    tags: ['jobs'],
    request: {
      body: Joi.object<IngestBatchBody, true>({
        images: Joi.array()
          .items(Joi.object<ImageRequestItem, true>({ ...imageSourceKeys(), filename: Joi.string().max(255) }))
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
      400: {
        description: 'Invalid parameters, too many items, an item without a valid type or source',
        schema: errorBody(),
      },
      502: { description: 'Storage failure', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const body = ctx.state.body;
      const bucket = resolveTargetBucket(services, body.bucket_name);
      assertBatchSize(services, body.images.length, 'images');
      const { items, stored } = await prepareItems(services, bucket, body.images);
      try {
        assertRunnableItem(items);
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
          `Job accepted: ${counted(items.filter((i) => !i.refused).length, 'image')} will be ingested into bucket ${bucket}`,
        );
      } catch (error) {
        await removeStored(services, bucket, stored);
        throw error;
      }
    },
  });
}
