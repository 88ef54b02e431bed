import Joi from 'joi';
import { isValidBucketName } from '../../lib/storage/index.js';

/** A bucket name (S3 rules) as a joi schema: request fields and configuration variables are checked the same way. */
export const bucketName = () =>
  Joi.string().custom((value: string, helpers) =>
    isValidBucketName(value) ? value : helpers.message({ custom: `{{#label}} must be a valid bucket name` }),
  );
