import Joi from 'joi';
import {
  defineRoute,
  HttpError,
  RequestValidationError,
  type RouteSpec,
  type ValidationIssue,
} from '../../lib/http/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { AllowList } from '../../lib/outbound/index.js';
import { listDetectionModels } from '../catalog/detection-models.js';
import { findPipeline, OFFLINE_CAPTIONER, pipelineOfType, type PipelineInfo } from '../catalog/pipelines.js';
import type { VlmConfig } from '../config.js';
import { RUN_NOT_FOUND } from '../errors.js';
import { SharedStateUnavailableError } from '../../lib/shared-state/index.js';
import { splitPassword, type CredentialSealer } from '../runs/stream-credentials.js';
import {
  CaptionRuns,
  DuplicateRunError,
  RunNameTakenError,
  StartBusyError,
  type NewRunSpec,
} from '../runs/caption-runs.js';
import { runRequestSchema, type RunRequest } from '../runs/run-request.js';
import { runSchema, runView } from '../runs/run-view.js';
import { resolveStreamSource, StreamSourceError, type HostResolver } from '../runs/stream-source.js';

/** What the run routes need. */
export interface RunRoutesDeps {
  runs: CaptionRuns;
  logger: Logger;
  vlm?: VlmConfig;
  modelsDir: string;
  defaultDetector: string;
  mediaRoot?: string;
  rtspAllow?: AllowList;
  /** Host resolution for CAPTION_RUNS_RTSP_ALLOW (tests inject one). */
  resolveHost?: HostResolver;
  /** Seals a stream's password into its run; undefined (a cluster without CAPTION_RUNS_CREDENTIALS_KEY): refused. */
  credentials?: CredentialSealer;
  /** False in a cluster without MQTT_BROKER: a run could publish nowhere, so starts are refused (503). */
  canPublish: boolean;
}

const BASE = '/generate_captions_alerts';

/** Why a start is refused where no broker is configured. */
const NO_BROKER = 'No MQTT broker is configured (MQTT_BROKER): a run could not publish its captions';

const runIdParams = Joi.object<{ run_id: string }, true>({
  run_id: Joi.string().required().description('The runId'),
});

const notFound = { description: 'No run has this runId: `{detail: {message: "Run not found"}}`' };

function issue(field: string, msg: string): ValidationIssue {
  return { loc: ['body', field], msg, type: 'value_error' };
}

/**
 * The checks that need the configuration or I/O, after the schema: the model, the pipeline (chosen from the type
 * or the model when not named), the detector and the stream. Every problem is collected; a 422 names each field.
 */
async function resolveRun(body: RunRequest, deps: RunRoutesDeps): Promise<NewRunSpec> {
  const issues: ValidationIssue[] = [];
  const modelName = body.modelName ?? deps.vlm?.model ?? OFFLINE_CAPTIONER;
  if (modelName !== OFFLINE_CAPTIONER && !deps.vlm) {
    issues.push(issue('modelName', `no VLM is configured (VLM_BASE_URL): use ${OFFLINE_CAPTIONER}`));
  }
  let pipeline: PipelineInfo;
  if (body.pipelineName) {
    pipeline = findPipeline(body.pipelineName)!;
    if (body.pipelineType && body.pipelineType !== pipeline.pipeline_type) {
      issues.push(issue('pipelineType', `pipeline ${pipeline.pipeline_name} is of type ${pipeline.pipeline_type}`));
    }
  } else {
    pipeline = pipelineOfType(body.pipelineType ?? (modelName === OFFLINE_CAPTIONER ? 'detection' : 'non-detection'));
  }
  if (modelName === OFFLINE_CAPTIONER && pipeline.pipeline_type !== 'detection') {
    issues.push(
      issue('pipelineName', 'the offline captioner writes captions from detections: use a detection pipeline'),
    );
  }
  let detectionModel: string | undefined;
  if (pipeline.pipeline_type === 'detection') {
    detectionModel = body.detectionModelName ?? deps.defaultDetector;
    if (!(await listDetectionModels(deps.modelsDir)).includes(detectionModel)) {
      issues.push(
        issue('detectionModelName', `${detectionModel} is not a detection model (GET /api/detection-models)`),
      );
    }
  }
  try {
    await resolveStreamSource(body.rtspUrl, {
      mediaRoot: deps.mediaRoot,
      allow: deps.rtspAllow,
      resolve: deps.resolveHost,
    });
  } catch (error) {
    if (!(error instanceof StreamSourceError)) throw error;
    issues.push(issue('rtspUrl', `rtspUrl ${error.message}`));
  }
  // The password never reaches the resource in the clear: sealed for the URL without it (the user name is kept).
  const { url: rtspUrl, password } = splitPassword(body.rtspUrl);
  if (password !== undefined && !deps.credentials) {
    issues.push(
      issue(
        'rtspUrl',
        'rtspUrl with a password needs CAPTION_RUNS_CREDENTIALS_KEY (shared by the service and its workers)',
      ),
    );
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  return {
    rtspUrl,
    ...(password !== undefined ? { rtspPassword: deps.credentials!.seal(password, rtspUrl) } : {}),
    prompt: body.prompt,
    modelName,
    pipelineName: pipeline.pipeline_name,
    pipelineType: pipeline.pipeline_type,
    runName: body.runName,
    maxTokens: body.maxNewTokens,
    ...(detectionModel ? { detectionModel, detectionThreshold: body.detectionThreshold } : {}),
    frameRate: body.frameRate,
    chunkSize: body.chunkSize,
    ...(body.frameWidth ? { frameWidth: body.frameWidth } : {}),
    ...(body.frameHeight ? { frameHeight: body.frameHeight } : {}),
    alerts: body.alerts,
  };
}

/** POST, GET (list), GET one and DELETE of /generate_captions_alerts. */
export function runRoutes(deps: RunRoutesDeps): RouteSpec[] {
  const { runs, logger } = deps;
  return [
    defineRoute<unknown, unknown, RunRequest>({
      method: 'post',
      path: BASE,
      summary: 'Start captioning (and alerting on) a live stream: creates a CaptionRun',
      description:
        'The run is a CaptionRun resource; its worker reads the stream, captions each chunk and publishes on ' +
        '`live-video-captioning/{runId}`. The same stream already running under the same pipeline is refused (409).',
      tags: ['runs'],
      request: { body: runRequestSchema(deps.mediaRoot) },
      responses: {
        200: { description: 'The run, status starting', schema: runSchema },
        409: { description: 'The stream already runs under this pipeline (the detail names the run)' },
        422: { description: 'Every invalid field, FastAPI style: `{detail: [{loc, msg, type}]}`' },
        503: {
          description:
            'No MQTT broker is configured (a cluster without MQTT_BROKER), another start of the stream held it too long, or the shared state (Redis) is down',
        },
      },
      mapError: (error) => {
        if (error instanceof DuplicateRunError || error instanceof RunNameTakenError) {
          return new HttpError(409, error.message);
        }
        if (error instanceof StartBusyError) return new HttpError(503, error.message);
        if (error instanceof SharedStateUnavailableError) {
          return new HttpError(503, 'The shared state of the replicas is unavailable; try again');
        }
        return undefined;
      },
      handler: async (ctx) => {
        if (!deps.canPublish) throw new HttpError(503, NO_BROKER);
        const spec = await resolveRun(ctx.state.body, deps);
        const run = await runs.start(spec);
        const view = runView(run);
        logger.info('caption run created', {
          requestId: ctx.state.requestId,
          runId: view.runId,
          pipeline: spec.pipelineName,
          model: spec.modelName,
          stream: view.rtspUrl,
        });
        ctx.body = view;
      },
    }),
    defineRoute<unknown, { state: 'active' | 'all' }>({
      method: 'get',
      path: BASE,
      summary: 'The active runs (?state=all: also stopped and failed runs still kept)',
      tags: ['runs'],
      request: {
        query: Joi.object<{ state: 'active' | 'all' }, true>({
          state: Joi.string().valid('active', 'all').default('active').description('active (default) or all'),
        }),
      },
      responses: { 200: { description: 'Runs, oldest first', schema: Joi.array().items(runSchema) } },
      handler: async (ctx) => {
        ctx.body = (await runs.list(ctx.state.query.state === 'all')).map(runView);
      },
    }),
    defineRoute<{ run_id: string }>({
      method: 'get',
      path: `${BASE}/:run_id`,
      summary: 'One run, with its topic and progress',
      tags: ['runs'],
      request: { params: runIdParams },
      responses: { 200: { description: 'The run', schema: runSchema }, 404: notFound },
      handler: async (ctx) => {
        const run = await runs.get(ctx.state.params.run_id);
        if (!run) throw new HttpError(404, RUN_NOT_FOUND);
        ctx.body = runView(run);
      },
    }),
    defineRoute<{ run_id: string }>({
      method: 'delete',
      path: `${BASE}/:run_id`,
      summary: 'Stop a run (kept, stopped, for the retention); stopping a stopped run answers the same',
      tags: ['runs'],
      request: { params: runIdParams },
      responses: {
        200: {
          description: 'Stopped',
          schema: Joi.object({
            status: Joi.string().valid('stopped').required(),
            runId: Joi.string().required(),
          }).label('RunStopped'),
        },
        404: notFound,
      },
      handler: async (ctx) => {
        const runId = ctx.state.params.run_id;
        if (!(await runs.stop(runId))) throw new HttpError(404, RUN_NOT_FOUND);
        logger.info('caption run stopped', { requestId: ctx.state.requestId, runId });
        ctx.body = { status: 'stopped', runId };
      },
    }),
  ];
}
