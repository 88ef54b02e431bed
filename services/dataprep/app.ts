import { createHttpApp, type HttpApp, type RouteSpec } from '../lib/http/index.js';
import { DATAPREP_ERROR_STYLE, mapDataprepError, mapDomainError } from './errors.js';
import { deleteBucketRoute, deleteVideoRoute } from './routes/delete-routes.js';
import { downloadMediaRoute } from './routes/download-route.js';
import { frameRoute } from './routes/frame-route.js';
import { healthRoute } from './routes/health-route.js';
import { ingestBatchRoute } from './routes/ingest-batch-route.js';
import { ingestDirectoryRoute } from './routes/ingest-dir-route.js';
import { ingestMediaRoute } from './routes/ingest-route.js';
import { cancelJobRoute, getJobRoute } from './routes/jobs-routes.js';
import { listMediaRoute } from './routes/list-route.js';
import { processBatchRoute } from './routes/process-batch-route.js';
import { processMediaRoute } from './routes/process-route.js';
import { searchRoute } from './routes/search-route.js';
import { summaryRoute } from './routes/summary-route.js';
import { telemetryRoute } from './routes/telemetry-route.js';
import { uploadBatchRoute } from './routes/upload-batch-route.js';
import { uploadMediaRoute } from './routes/upload-route.js';
import { buildServices, DATAPREP_BASE_PATH, type DataprepDeps, type DataprepServices } from './runtime/services.js';

/**
 * A route answering domain errors through the dataprep mapping (backend failures 502, rejected keys and URLs 400).
 * List and download go without: the contract answers their storage failures with plain 500s.
 */
function withDataprepErrors(route: RouteSpec): RouteSpec {
  return { ...route, mapError: mapDataprepError };
}

/** The dataprep Koa app (no listen): the contract's synchronous endpoints under /v1/dataprep. */
export function createApp(deps: DataprepDeps): HttpApp & { services: DataprepServices } {
  const services = buildServices(deps);
  const routes = [
    healthRoute(services),
    withDataprepErrors(summaryRoute(services)),
    withDataprepErrors(processMediaRoute(services)),
    withDataprepErrors(uploadMediaRoute(services)),
    withDataprepErrors(ingestMediaRoute(services)),
    listMediaRoute(services),
    downloadMediaRoute(services),
    frameRoute(services),
    withDataprepErrors(searchRoute(services)),
    withDataprepErrors(uploadBatchRoute(services)),
    withDataprepErrors(processBatchRoute(services)),
    withDataprepErrors(ingestBatchRoute(services)),
    withDataprepErrors(ingestDirectoryRoute(services)),
    // The batch job routes (`/media/jobs/:job_id`) must be registered before these two to win over them.
    getJobRoute(services),
    cancelJobRoute(services),
    withDataprepErrors(deleteVideoRoute(services)),
    withDataprepErrors(deleteBucketRoute(services)),
    telemetryRoute(services),
  ];
  // Base64 of the largest ingest image, plus room for the other fields.
  const jsonLimit = Math.ceil((services.limits.ingestMaxBytes * 4) / 3) + 64 * 1024;
  const http = createHttpApp({
    info: {
      title: 'Argus media preparation API',
      version: '1.0.0',
      description:
        'Ingests videos and images, creates embeddings, lists, streams and deletes media, and searches them ' +
        `(POST /search; text queries in "${services.search.mode}" mode).`,
      tags: {
        health: 'Liveness and the configuration in use',
        summary: 'Video summaries stored as text embeddings',
        media: 'Upload, ingest, process, list, stream and delete media, one item per request',
        search: 'Find stored frames and media by words, a picture or a stored frame',
        jobs: 'Batches and directories embedded in the background as IngestJobs, their progress and cancellation',
        telemetry: 'Recent processing records',
      },
    },
    service: 'dataprep',
    logger: deps.logger,
    errors: DATAPREP_ERROR_STYLE,
    mapError: mapDomainError,
    routes,
    basePath: DATAPREP_BASE_PATH,
    jsonLimit: `${jsonLimit}b`,
  });
  http.metrics.registry.registerMetric(services.uploadsAborted);
  http.metrics.registry.registerMetric(services.frames.spawned);
  http.metrics.registry.registerMetric(services.frames.requests);
  return { ...http, services };
}
