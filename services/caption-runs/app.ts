import type { ServiceControlPlane } from '../../operator/ports/index.js';
import { createHttpApp, type HttpApp } from '../lib/http/index.js';
import type { Logger } from '../lib/log/index.js';
import type { SharedState } from '../lib/shared-state/index.js';
import type { CaptionRunsConfig } from './config.js';
import { captionRunsErrorStyle } from './errors.js';
import { detectionModelsRoute, pipelinesRoute, vlmModelsRoute } from './routes/catalog-routes.js';
import { metricsSocketRoute } from './metrics/metrics-socket.js';
import { healthRoute } from './routes/health-route.js';
import { metadataStreamRoute } from './routes/metadata-stream-route.js';
import type { MetadataRelay } from './relay/metadata-relay.js';
import { sharedRead } from './relay/shared-read.js';
import { runRoutes } from './routes/runs-routes.js';
import { CaptionRuns, runIdOf } from './runs/caption-runs.js';
import { runState } from './runs/run-view.js';
import type { CredentialSealer } from './runs/stream-credentials.js';
import type { HostResolver } from './runs/stream-source.js';

/** Base path of every route (the contract's `/api`). */
export const API_BASE_PATH = '/api';

/** How long one read of the runs' states serves the streams' status messages. */
const STATUS_READ_TTL_MS = 250;

/** Largest JSON body: a run request is small (a prompt of at most 8192 characters and 32 alert rules). */
const MAX_BODY_BYTES = 256 * 1024;

/** Everything the HTTP surface needs; main.ts builds the real ones, tests their own. */
export interface CaptionRunsDeps {
  logger: Logger;
  /** Where runs live as CaptionRun resources. */
  controlPlane: ServiceControlPlane;
  config: Pick<CaptionRunsConfig, 'vlm' | 'rtspAllow' | 'mediaRoot' | 'defaultDetector'> & { modelsDir: string };
  /** Relays the runs' MQTT captions to the SSE subscribers. */
  relay: MetadataRelay;
  /** Host resolution for CAPTION_RUNS_RTSP_ALLOW (default: the system resolver). */
  resolveHost?: HostResolver;
  /** Where starts claim their stream (Redis with ARGUS_REDIS_URL: every replica; default: this process's memory). */
  sharedState?: SharedState;
  /** Seals the streams' passwords into their runs; undefined: a URL with a password is refused. */
  credentials?: CredentialSealer;
  /** Whether runs can publish (a broker is configured); false: starts are refused 503 (default true). */
  canPublish?: boolean;
}

/** Builds the caption-runs Koa app (no listen). */
export function createApp(deps: CaptionRunsDeps): HttpApp {
  const { config, logger } = deps;
  const runs = new CaptionRuns(deps.controlPlane, deps.sharedState);
  return createHttpApp({
    info: {
      title: 'Argus live caption runs',
      version: '1.0.0',
      description:
        'Caption runs on live streams: each run is a CaptionRun resource whose worker reads the stream with ffmpeg, ' +
        'captions chunks of frames with a VLM (or, without one, from what the detector saw), publishes every caption ' +
        'on MQTT (`live-video-captioning/{runId}`) and raises the run’s alert rules to alert-dispatch.',
      tags: {
        health: 'Liveness and the default captioner',
        catalog: 'The VLMs, detection models and pipelines a run may use',
        metrics: 'Live metrics over a WebSocket',
        runs: 'Caption runs started, listed and stopped, and their captions streamed',
      },
    },
    service: 'caption-runs',
    logger,
    errors: captionRunsErrorStyle(),
    basePath: API_BASE_PATH,
    jsonLimit: MAX_BODY_BYTES,
    routes: [
      healthRoute(config.vlm?.model, deps.canPublish ?? true),
      vlmModelsRoute(config.vlm, logger),
      detectionModelsRoute(config.modelsDir),
      pipelinesRoute(),
      metricsSocketRoute(),
      // Before the run routes: `/generate_captions_alerts/:run_id` would take the path for a runId.
      metadataStreamRoute({
        relay: deps.relay,
        logger,
        // One store read serves the status messages of every open stream due at the same tick.
        runStates: sharedRead(
          async () => Object.fromEntries((await runs.list(true)).map((run) => [runIdOf(run), runState(run)])),
          STATUS_READ_TTL_MS,
        ),
      }),
      ...runRoutes({
        runs,
        logger,
        vlm: config.vlm,
        modelsDir: config.modelsDir,
        defaultDetector: config.defaultDetector,
        mediaRoot: config.mediaRoot,
        rtspAllow: config.rtspAllow,
        resolveHost: deps.resolveHost,
        credentials: deps.credentials,
        canPublish: deps.canPublish ?? true,
      }),
    ],
  });
}
