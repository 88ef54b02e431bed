import Joi from 'joi';
import { HttpError } from '../../lib/http/index.js';
import { DATAPREP_ERROR_STYLE } from '../errors.js';
import type { DataprepServices } from '../runtime/services.js';
import { VIDEO_ID_PATTERN } from '../media/video-ids.js';

import { bucketName } from '../media/bucket-name.js';

/** A bucket name (S3 rules); the default bucket applies when omitted. */
export { bucketName };

/** A video id: one safe path segment. */
export const videoId = () =>
  Joi.string().pattern(VIDEO_ID_PATTERN).messages({ 'string.pattern.base': 'invalid video_id' });

/** Every Nth frame. */
export const frameInterval = () => Joi.number().integer().min(1).max(60).default(15);

/** Minimum detector score of embedded crops. */
export const detectionConfidence = () => Joi.number().min(0.1).max(1.0).default(0.85);

/** Whether detected objects are embedded as separate crops. */
export const enableObjectDetection = () => Joi.boolean().default(true);

/** Tags in a JSON body. */
export const bodyTags = () => Joi.array().items(Joi.string().max(256)).max(100).default([]);

/** Tags in a query: repeated (`tags=a&tags=b`) or comma-separated (`tags=a,b`). */
export const queryTags = () =>
  Joi.array()
    .items(Joi.string().max(4096))
    .single()
    .max(100)
    .default([])
    .custom((tags: string[]) =>
      tags
        .flatMap((t) => t.split(','))
        .map((t) => t.trim())
        .filter(Boolean),
    );

/** The query of the upload endpoints as validated (defaults applied). */
export interface UploadQuery {
  bucket_name?: string;
  frame_interval: number;
  enable_object_detection: boolean;
  detection_confidence: number;
  tags: string[];
}

/** The query of the upload endpoints (upload, upload/batch): where to store the files and how to embed them. */
export const uploadQuery = () =>
  Joi.object<UploadQuery, true>({
    bucket_name: bucketName(),
    frame_interval: frameInterval(),
    enable_object_detection: enableObjectDetection(),
    detection_confidence: detectionConfidence(),
    tags: queryTags(),
  });

/** Common shape of success answers: both fields always sent. */
export const statusMessage = () =>
  Joi.object({ status: Joi.string().valid('success').required(), message: Joi.string().required() });

/** Common shape of error answers (the service's ErrorStyle defines it). */
export const errorBody = () => DATAPREP_ERROR_STYLE.body;

/** The bucket a request names, or the default; the reserved marker bucket is refused (400). */
export function resolveBucket(services: DataprepServices, name: string | undefined): string {
  const bucket = name ?? services.config.defaultBucket;
  if (bucket === services.config.markerBucket) throw new HttpError(400, `Bucket ${bucket} is reserved`);
  return bucket;
}

/**
 * Bucket names media may not be created in: `DELETE /media/jobs/{job_id}` would otherwise also name video
 * `{job_id}` of a bucket called `jobs` (the job routes win).
 */
export const RESERVED_MEDIA_BUCKETS: readonly string[] = ['jobs'];

/** The bucket new media is stored in: as resolveBucket, and never a name the routes reserve. */
export function resolveTargetBucket(services: DataprepServices, name: string | undefined): string {
  const bucket = resolveBucket(services, name);
  if (RESERVED_MEDIA_BUCKETS.includes(bucket)) {
    throw new HttpError(400, `Bucket name ${bucket} is reserved (it would collide with /media/jobs); choose another`);
  }
  return bucket;
}
