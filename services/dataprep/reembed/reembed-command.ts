import type { Logger } from '../../lib/log/index.js';
import type { DataprepConfig } from '../config.js';
import { openDataprepRuntime } from '../runtime/open-runtime.js';
import { buildServices } from '../runtime/services.js';
import { reembedArchive, type ReembedOptions } from './reembed-archive.js';

/**
 * `argus dataprep reembed`: opens dataprep's stores and models from `config` (as the service does), converts the
 * archive (reembedArchive) and logs each video and the totals. Resolves true when a video failed or stale vectors
 * remain (exit status 1); a failed video keeps its old vectors, and running the command again retries it.
 */
export async function runReembed(
  config: DataprepConfig,
  logger: Logger,
  options: Pick<ReembedOptions, 'bucketName' | 'signal'>,
): Promise<boolean> {
  const runtime = await openDataprepRuntime(config, logger);
  try {
    const services = buildServices(runtime.deps);
    const report = await reembedArchive(services, {
      ...options,
      onVideo: (video, outcome) =>
        outcome.error === undefined
          ? logger.info('re-embedded', { bucket_name: video.bucketName, video_id: video.videoId })
          : logger.warn('re-embed failed; its old vectors are kept', {
              bucket_name: video.bucketName,
              video_id: video.videoId,
              error: outcome.error,
            }),
    });
    logger.info('re-embed finished', {
      descriptor: report.descriptor,
      converted: report.converted.length,
      failed: report.failed.length,
      remaining_stale_vectors: report.remaining,
    });
    return report.failed.length > 0 || report.remaining > 0;
  } finally {
    await runtime.close();
  }
}
