import Joi from 'joi';
import type { CaptionRun } from '../../../operator/api/index.js';
import { isActive, runIdOf } from './caption-runs.js';
import { mqttTopic } from './run-ids.js';
import { withPassword } from './stream-credentials.js';
import { redactedSource } from './stream-source.js';

/** The states of a run as the API shows them. */
export const RUN_STATES = ['starting', 'running', 'reconnecting', 'failed', 'stopped'] as const;

/** A run's state as the API shows it: the phase in lower case; `stopped` as soon as DELETE asked for it. */
export type RunState = (typeof RUN_STATES)[number];

/** The run's state: a run asked to stop is `stopped` unless it failed first; no phase yet is `starting`. */
export function runState(run: CaptionRun): RunState {
  const phase = run.status?.phase;
  if (phase === 'Failed') return 'failed';
  if (run.spec.stopRequested || phase === 'Stopped') return 'stopped';
  return (phase?.toLowerCase() as RunState | undefined) ?? 'starting';
}

/** The Run as the API answers it (the contract's fields, the original's request echo, then the run's progress). */
export function runView(run: CaptionRun): Record<string, unknown> {
  const { spec, status } = run;
  const runId = runIdOf(run);
  return {
    runId,
    pipelineId: run.metadata.uid ?? run.metadata.name,
    peerId: spec.peerId ?? '',
    mqttTopic: mqttTopic(runId),
    modelName: spec.modelName,
    pipelineName: spec.pipelineName,
    pipelineType: spec.pipelineType ?? null,
    runName: spec.runName,
    prompt: spec.prompt,
    maxTokens: spec.maxTokens,
    // A sealed password is shown as a redacted one: the user sees that the run has one.
    rtspUrl: redactedSource(spec.rtspPassword ? withPassword(spec.rtspUrl, '***') : spec.rtspUrl),
    frameRate: spec.frameRate ?? null,
    chunkSize: spec.chunkSize ?? null,
    frameWidth: spec.frameWidth ?? null,
    frameHeight: spec.frameHeight ?? null,
    detectionModelName: spec.detectionModel ?? null,
    detectionThreshold: spec.detectionThreshold ?? null,
    alerts: spec.alerts ?? [],
    status: runState(run),
    active: isActive(run),
    message: status?.message ?? null,
    createdAt: run.metadata.creationTimestamp ?? null,
    startTime: status?.startTime ?? null,
    finishedTime: status?.finishedTime ?? null,
    framesProcessed: status?.framesProcessed ?? 0,
    captionsPublished: status?.captionsPublished ?? 0,
    reconnects: status?.reconnects ?? 0,
    lastCaptionTime: status?.lastCaptionTime ?? null,
    lastError: status?.lastError ?? null,
  };
}

const nullableString = () => Joi.string().allow(null);
const nullableInteger = () => Joi.number().integer().allow(null);

/** Joi schema of the Run, for the OpenAPI document: runView sends every field (null where unknown). */
export const runSchema = Joi.object({
  runId: Joi.string().required().description('Sanitised runName (unique with _1, _2, …) or 10 random hex characters'),
  pipelineId: Joi.string().required().description('Id of this run instance (the CaptionRun uid)'),
  peerId: Joi.string().required().description('s and 7 hex characters'),
  mqttTopic: Joi.string().required().description('live-video-captioning/{runId}: where the run publishes'),
  modelName: Joi.string().required(),
  pipelineName: Joi.string().required(),
  pipelineType: nullableString().valid('detection', 'non-detection', null).required(),
  runName: Joi.string().allow('').required(),
  prompt: Joi.string().required(),
  maxTokens: Joi.number().integer().required().description('maxNewTokens of the request'),
  rtspUrl: Joi.string().required().description('The stream; a password in it is shown as ***'),
  frameRate: Joi.number().allow(null).required(),
  chunkSize: nullableInteger().required(),
  frameWidth: nullableInteger().required(),
  frameHeight: nullableInteger().required(),
  detectionModelName: nullableString().required(),
  detectionThreshold: Joi.number().allow(null).required(),
  alerts: Joi.array()
    .items(
      Joi.object({ name: Joi.string().required(), captionContains: Joi.string(), label: Joi.string() }).label(
        'RunAlertRule',
      ),
    )
    .required(),
  status: Joi.string()
    .valid(...RUN_STATES)
    .required()
    .description('The run phase in lower case; stopped as soon as DELETE asked for it'),
  active: Joi.boolean().required().description('Listed by GET /api/generate_captions_alerts without ?state=all'),
  message: nullableString().required().description('Detail of the phase'),
  createdAt: nullableString().required(),
  startTime: nullableString().required(),
  finishedTime: nullableString().required(),
  framesProcessed: Joi.number().integer().required(),
  captionsPublished: Joi.number().integer().required(),
  reconnects: Joi.number().integer().required(),
  lastCaptionTime: nullableString().required(),
  lastError: nullableString().required(),
}).label('Run');
