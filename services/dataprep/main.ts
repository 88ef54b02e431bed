import { INGEST_WORKER } from '../../operator/api/index.js';
import type { ServiceControlPlane } from '../../operator/ports/index.js';
import { listen, type StopOptions } from '../lib/http/index.js';
import { createLogger, type Logger } from '../lib/log/index.js';
import { createApp } from './app.js';
import type { DataprepConfig } from './config.js';
import { ingestWorker } from './ingest-worker/ingest-worker.js';
import { openDataprepRuntime } from './runtime/open-runtime.js';
import type { ImageSpaces } from './search/image-spaces.js';

/** A running dataprep service. */
export interface StartedDataprep {
  url: string;
  /**
   * Stops accepting, aborts in-flight uploads and processing, waits (until `deadline`, default the configured grace
   * from now) for their rollbacks, then releases storage, vector stores and models.
   */
  close(options?: StopOptions): Promise<void>;
}

/**
 * Starts the dataprep service from its validated configuration (loadDataprepConfig): imports the default models on first use, opens
 * storage and the vector stores, registers the ingest worker with `controlPlane` (batch endpoints create IngestJobs
 * there) and listens on MM_DATAPREP_HOST:MM_DATAPREP_HOST_PORT.
 */
export async function startDataprep(
  config: DataprepConfig,
  logger?: Logger,
  controlPlane?: ServiceControlPlane,
): Promise<StartedDataprep> {
  const log =
    logger ?? createLogger({ service: 'dataprep', level: config.platform.logLevel, json: config.platform.logJson });
  const runtime = await openDataprepRuntime(config, log);
  try {
    const { app, services } = createApp({ ...runtime.deps, controlPlane });
    // Embedded, the control plane runs the ingest workloads in this process; in the cluster this is a no-op.
    controlPlane?.registerWorker(INGEST_WORKER, ingestWorker(services, controlPlane.resources));
    warnOfOtherImageSpaces(services.search.imageSpaces, log);
    const server = await listen(app, {
      port: config.port,
      host: config.host,
      logger: log,
      name: 'dataprep',
      graceMs: config.platform.shutdownGraceMs,
      apiKeys: config.platform.apiKeys,
    });
    return {
      url: server.url,
      close: async (options) => {
        // Handlers have returned (their rollbacks done) before anything they use is released.
        await server.close(options);
        await runtime.close();
      },
    };
  } catch (error) {
    await runtime.close().catch(() => undefined);
    throw error;
  }
}

/** Says once, without holding up the start, when stored image vectors are in another descriptor's space. */
function warnOfOtherImageSpaces(spaces: ImageSpaces, log: Logger): void {
  spaces.others().then(
    (others) => {
      if (others.length === 0) return;
      log.warn(
        'stored image vectors of another descriptor: image search embeds queries once per space until converted',
        {
          descriptor: spaces.current,
          others,
          convert: 'npm run argus -- dataprep reembed',
        },
      );
    },
    (error: Error) => log.debug('could not check the descriptors of stored image vectors', { error: error.message }),
  );
}
