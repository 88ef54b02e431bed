// s3rver 3.7 ignores `If-None-Match: *` on PutObject and overwrites, where S3 (since 2024), MinIO and Ceph refuse
// with 412 PreconditionFailed when the key exists. The object stores' create-if-absent follows the real protocol, so
// the test server is taught it here: the same header, answered exactly as S3 documents it.
const locks = new Map();

/** Runs `action` after every earlier action on `name`, so that check-then-write is atomic per key. */
async function serialised(name, action) {
  const previous = locks.get(name) ?? Promise.resolve();
  let release;
  const mine = new Promise((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  locks.set(name, tail);
  await previous;
  try {
    return await action();
  } finally {
    release();
    if (locks.get(name) === tail) locks.delete(name);
  }
}

/** Koa middleware: path-style PutObject with `If-None-Match: *` stores only when the key is absent, else 412. */
export function conditionalPut() {
  return async (ctx, next) => {
    const conditional = ctx.method === 'PUT' && ctx.get('if-none-match') === '*';
    if (!conditional || 'uploadId' in ctx.query || ctx.get('x-amz-copy-source')) return next();
    const [bucket, ...rest] = ctx.path.split('/').filter(Boolean);
    if (!bucket || rest.length === 0) return next();
    const key = decodeURIComponent(rest.join('/'));
    return serialised(`${bucket}/${key}`, async () => {
      if (await ctx.store.existsObject(bucket, key)) {
        ctx.status = 412;
        ctx.body = {
          Error: {
            Code: 'PreconditionFailed',
            Message: 'At least one of the pre-conditions you specified did not hold',
            Condition: 'If-None-Match',
          },
        };
        return;
      }
      await next();
    });
  };
}
