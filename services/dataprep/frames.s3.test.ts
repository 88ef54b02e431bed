import { S3ObjectStore } from '../lib/storage/index.js';
import { startS3rver, type S3rverHandle } from '../lib/storage/testing/s3rver-server.js';
import { describeFrameRoutes } from './testing/frame-suite.js';
import { startStallingProxy, type StallingProxy } from './testing/stalling-proxy.js';

let s3: S3rverHandle | undefined;
let proxy: StallingProxy | undefined;

describeFrameRoutes({
  name: 's3 (s3rver, through a proxy that can hold reads)',
  async open() {
    s3 = await startS3rver();
    proxy = await startStallingProxy(s3.endpoint);
    return new S3ObjectStore({ ...s3.storeConfig, endpoint: proxy.url });
  },
  proxy: () => proxy!,
  s3Config: () => ({ ...s3!.storeConfig, endpoint: proxy!.url }),
  async stop() {
    await proxy?.close();
    await s3?.stop();
  },
});
