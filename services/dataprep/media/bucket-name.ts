import Joi from 'joi';
import { BUCKET_NAME_PATTERN, BUCKET_NAME_RULE } from '../../lib/storage/index.js';

/**
 * A bucket name (S3 rules) as a joi schema: request fields and configuration variables are checked the same way, the
 * rule is in the OpenAPI document (length and pattern) and a refusal states it.
 */
export const bucketName = () => {
  const message = `{{#label}} must be a bucket name: ${BUCKET_NAME_RULE}`;
  // The pattern holds the length too (one message per refusal); the document also states it as lengths.
  return Joi.string()
    .pattern(BUCKET_NAME_PATTERN)
    .description(`Bucket name: ${BUCKET_NAME_RULE}`)
    .meta({ swagger: { minLength: 3, maxLength: 63 } })
    .messages({ 'string.pattern.base': message });
};
