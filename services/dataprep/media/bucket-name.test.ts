import { describe, expect, it } from '@jest/globals';
import Joi from 'joi';
import { serviceDocuments } from '../../../hack/openapi-documents.js';
import { RequestValidationError, validatePart } from '../../lib/http/index.js';
import { isValidBucketName } from '../../lib/storage/index.js';
import { bucketName } from './bucket-name.js';

const query = Joi.object({ bucket_name: bucketName() });

/** The message of the 400 a request with `name` gets, undefined when the name passes. */
function refusal(name: string): string | undefined {
  try {
    validatePart('query', query, { bucket_name: name });
    return undefined;
  } catch (error) {
    return (error as RequestValidationError).message;
  }
}

describe('bucket names', () => {
  it("take S3's names and refuse the others with a 400 that states the rule", () => {
    for (const name of ['argus-media', 'a.b-c', 'abc', 'x'.repeat(63), '1.2.3']) expect(refusal(name)).toBeUndefined();
    for (const name of ['ab', 'x'.repeat(64), 'Bad_Bucket', 'a..b', 'a.-b', 'a-.b', '-abc', 'abc.', '192.168.1.2']) {
      expect(refusal(name)).toBe(
        'query.bucket_name: bucket_name must be a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens, ' +
          'starting and ending with a letter or digit, without two dots or a dot beside a hyphen, and not an IP ' +
          'address (S3 bucket naming rules)',
      );
      expect(isValidBucketName(name)).toBe(false);
    }
  });

  it("are in dataprep's OpenAPI document with their length and pattern, the rule described", async () => {
    const doc = (await serviceDocuments()).dataprep as {
      paths: Record<string, Record<string, { parameters: Array<{ name: string; schema: Record<string, unknown> }> }>>;
    };
    const param = doc.paths['/v1/dataprep/media/{bucket_name}'].delete.parameters.find((p) => p.name === 'bucket_name');
    expect(param?.schema).toMatchObject({ type: 'string', minLength: 3, maxLength: 63 });
    const pattern = new RegExp(String(param?.schema.pattern));
    expect(['argus-media', 'Bad_Bucket', 'a..b', '10.0.0.1'].map((name) => pattern.test(name))).toEqual([
      true,
      false,
      false,
      false,
    ]);
    expect(param?.schema.description).toMatch(/3 to 63 lowercase letters/);
  });
});
