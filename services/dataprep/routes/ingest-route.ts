import { createHash } from 'node:crypto';
import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import { ACCEPTED_IMAGE_EXTENSIONS, detectMediaType } from '../../lib/media/index.js';
import type { StoredMedia } from '../media/catalogue.js';
import { loadImageSource } from '../ingest/image-source.js';
import { imageFilename, storeImage } from '../ingest/stored-image.js';
import type { DataprepServices } from '../runtime/services.js';
import { writeTempMedia } from '../media/temp-media.js';
import { newVideoId } from '../media/video-ids.js';
import { clientGone } from './client-gone.js';
import {
  bodyTags,
  bucketName,
  detectionConfidence,
  enableObjectDetection,
  errorBody,
  resolveTargetBucket,
  statusMessage,
} from './schemas.js';
import { counted } from '../../lib/wording/index.js';

/** The typed image source of an ingest request as validated (also in each item of the batch variant). */
export interface ImageSourceFields {
  type: 'image_base64' | 'image_url';
  image_base64?: string;
  image_url?: string;
}

/** The keys of a typed image source: the ingest body and each item of the batch variant are objects with these. */
export const imageSourceKeys = () => ({
  type: Joi.string().valid('image_base64', 'image_url').required(),
  image_base64: Joi.string().when('type', { is: 'image_base64', then: Joi.required() }),
  image_url: Joi.string().max(8192).when('type', { is: 'image_url', then: Joi.required() }),
});

/** The body of POST /media/ingest as validated (defaults applied). */
interface IngestBody extends ImageSourceFields {
  bucket_name?: string;
  filename?: string;
  enable_object_detection: boolean;
  detection_confidence: number;
  tags: string[];
}

/** POST /media/ingest: one image from base64 or a URL, format detected from its bytes, stored and embedded. */
export function ingestMediaRoute(services: DataprepServices): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/media/ingest',
    summary: 'Ingest one image from base64 or an http(s) URL',
    tags: ['media'],
    request: {
      body: Joi.object<IngestBody, true>({
        ...imageSourceKeys(),
        bucket_name: bucketName(),
        filename: Joi.string().max(255),
        enable_object_detection: enableObjectDetection(),
        detection_confidence: detectionConfidence(),
        tags: bodyTags(),
      }),
    },
    responses: {
      201: {
        description: 'Stored and embedded',
        schema: statusMessage().keys({
          video_id: Joi.string().required(),
          bucket_name: Joi.string().required(),
          filename: Joi.string().required(),
        }),
      },
      400: { description: 'Bad or undecodable source, unsupported format', schema: errorBody() },
      409: { description: 'Duplicate content (duplicates disallowed)', schema: errorBody() },
      413: { description: 'Image over the 50 MB cap', schema: errorBody() },
      502: { description: 'Storage failure', schema: errorBody() },
      500: { description: 'Unexpected failure', schema: errorBody() },
    },
    handler: async (ctx) => {
      const body = ctx.state.body;
      const bucket = resolveTargetBucket(services, body.bucket_name);
      const { bytes, nameHint } = await loadImageSource(body, services.imageSources);
      const type = await detectMediaType(bytes);
      if (!type || type.kind !== 'image') {
        throw new HttpError(
          400,
          `Unsupported or undecodable image: accepted formats are ${ACCEPTED_IMAGE_EXTENSIONS.join(', ')}`,
        );
      }
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const videoId = newVideoId();
      // Checked before storing so a duplicate costs no write; processing checks again after storing.
      await services.processing.assertNotDuplicate(sha256, { bucket, videoId });
      const filename = imageFilename(type, body.filename ?? nameHint);
      const local = await writeTempMedia(services.tempDir, filename, bytes);
      try {
        let media: StoredMedia;
        try {
          media = await storeImage(services.objectStore, { bucket, videoId, filename, type }, bytes);
        } catch (error) {
          await services.objectStore.deletePrefix(bucket, `${videoId}/`).catch(() => undefined);
          throw error;
        }
        const { result } = await services.processing.process({
          source: `${services.basePath}/media/ingest`,
          requestId: ctx.state.requestId,
          media,
          kind: 'image',
          local: { ...local, sha256 },
          options: {
            frameInterval: 1,
            detectionEnabled: body.enable_object_detection,
            detectionConfidence: body.detection_confidence,
            tags: body.tags,
          },
          ownsStoredMedia: true,
          enforceDuplicatePolicy: true,
          signal: clientGone(ctx),
        });
        ctx.status = 201;
        ctx.body = {
          status: 'success',
          message: `Ingested ${filename} as video_id ${videoId}; ${counted(result.embeddingsStored, 'embedding')} created`,
          video_id: videoId,
          bucket_name: bucket,
          filename,
        };
      } finally {
        await local.remove();
      }
    },
  });
}
