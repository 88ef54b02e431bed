// s3rver 3.7 answers AbortMultipartUpload (405) and ListMultipartUploads (501) as not implemented, yet keeps every
// started upload under <bucket>/._S3rver_uploads/<uploadId>/ (a `key` file and the parts). These two operations over
// that layout let tests check with the real SDK that an aborted put leaves no multipart upload behind.
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';

const UPLOADS = '._S3rver_uploads';
const UPLOAD_ID = /^[0-9a-f]{32}$/;

/** Koa middleware for path-style AbortMultipartUpload and ListMultipartUploads over s3rver's `directory`. */
export function multipartExtensions(directory) {
  return async (ctx, next) => {
    const [bucket, ...key] = ctx.path.split('/').filter(Boolean);
    if (!bucket || bucket.includes('..')) return next();
    const uploads = path.join(directory, bucket, UPLOADS);
    if (ctx.method === 'DELETE' && key.length > 0 && typeof ctx.query.uploadId === 'string') {
      if (!UPLOAD_ID.test(ctx.query.uploadId)) return next();
      await rm(path.join(uploads, ctx.query.uploadId), { recursive: true, force: true });
      ctx.status = 204;
      return;
    }
    if (ctx.method === 'GET' && key.length === 0 && 'uploads' in ctx.query) {
      const ids = await readdir(uploads).catch(() => []);
      const Upload = await Promise.all(
        ids.map(async (UploadId) => ({ Key: await readFile(path.join(uploads, UploadId, 'key'), 'utf8'), UploadId })),
      );
      ctx.body = { ListMultipartUploadsResult: { Bucket: bucket, IsTruncated: false, Upload } };
      return;
    }
    return next();
  };
}
