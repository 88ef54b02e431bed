import type { ResourceStore, Worker } from '../../../operator/ports/index.js';
import { createLogger, type Logger } from '../../lib/log/index.js';
import { buildServices } from '../runtime/services.js';
import { loadDataprepConfig } from '../config.js';
import { openDataprepRuntime } from '../runtime/open-runtime.js';
import { ingestWorker } from './ingest-worker.js';

/** The ingest worker of a worker process, and how to release what it opened. */
export interface StartedIngestWorker {
  worker: Worker;
  close(): Promise<void>;
}

/**
 * Builds dataprep's ingest worker from the environment (the same MM_DATAPREP_* settings as the service: storage,
 * vector database, models, ingest root) over `resources` — what `argus worker ingest` runs in a cluster pod with the
 * kubernetes ResourceStore. No HTTP server is started.
 */
export async function startIngestWorker(
  env: NodeJS.ProcessEnv,
  resources: ResourceStore,
  logger?: Logger,
): Promise<StartedIngestWorker> {
  const config = loadDataprepConfig(env);
  const log =
    logger ??
    createLogger({ service: 'dataprep-worker', level: config.platform.logLevel, json: config.platform.logJson });
  const runtime = await openDataprepRuntime(config, log);
  const services = buildServices({ ...runtime.deps });
  return { worker: ingestWorker(services, resources), close: () => runtime.close() };
}
