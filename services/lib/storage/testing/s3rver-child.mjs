// Runs s3rver in its own process: its ListObjectsV2 continuation tokens use DES, which Node 20's OpenSSL 3 only
// offers with --openssl-legacy-provider, a flag that cannot be turned on inside an already running process.
import process from 'node:process';
import S3rver from 's3rver';
import { conditionalPut } from './s3rver-conditional-put.mjs';
import { multipartExtensions } from './s3rver-multipart.mjs';

const directory = process.argv[2];
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
// After s3rver's logger, XML encoder and mount interop, before its bucket routing (path-style requests only).
server.middleware.splice(3, 0, multipartExtensions(directory), conditionalPut());
const { port } = await server.run();
process.send({ port });
process.on('message', (message) => {
  if (message === 'stop') server.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
