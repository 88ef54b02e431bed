import { S3ObjectStore } from '../lib/storage/index.js';
import { startS3rver, type S3rverHandle } from '../lib/storage/testing/s3rver-server.js';
import { describeDataprepRoutes } from './testing/route-suite.js';

let s3: S3rverHandle | undefined;

describeDataprepRoutes({
  name: 's3 (s3rver)',
  readsFailWhenBroken: true,
  async open() {
    s3 = await startS3rver();
    return new S3ObjectStore(s3.storeConfig);
  },
  async broken() {
    // Port 9 on loopback has no listener: connections are refused like an unreachable endpoint.
    return new S3ObjectStore({ ...s3!.storeConfig, endpoint: 'http://127.0.0.1:9' });
  },
  async stop() {
    await s3?.stop();
  },
});
