import Joi from 'joi';
import {
  CAPTION_PIPELINE_TYPES,
  CAPTION_RUN_MAX_ALERTS,
  type CaptionPipelineType,
  type CaptionRunAlert,
} from '../../../operator/api/index.js';
import { PIPELINES } from '../catalog/pipelines.js';
import { streamSourceProblem } from './stream-source.js';

/** The prompt of a run that gives none (the original's). */
export const DEFAULT_PROMPT = 'Describe what you see in one sentence.';

/** What POST /api/generate_captions_alerts accepts, after validation and defaults. */
export interface RunRequest {
  rtspUrl: string;
  modelName?: string;
  prompt: string;
  maxNewTokens: number;
  pipelineName?: string;
  pipelineType?: CaptionPipelineType;
  detectionModelName?: string;
  detectionThreshold: number;
  runName: string;
  frameRate: number;
  chunkSize: number;
  frameWidth?: number;
  frameHeight?: number;
  alerts: CaptionRunAlert[];
}

/** Text that reaches prompts, logs and topics: no C0 control characters but tab, line feed and carriage return. */
// eslint-disable-next-line no-control-regex
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/;

const text = (max: number) =>
  Joi.string()
    .max(max)
    .pattern(NO_CONTROL_CHARACTERS)
    .messages({ 'string.pattern.base': '{{#label}} must not contain control characters' });

const alertSchema = Joi.object<CaptionRunAlert, true>({
  name: text(128).trim().min(1).required().description('Name of the rule: the alert type sent to alert-dispatch'),
  captionContains: text(256).trim().min(1).description('Fires when the caption contains this text (any case)'),
  label: text(128).trim().min(1).description('Fires when the detector saw an object with this label'),
})
  .or('captionContains', 'label')
  .label('AlertRule');

/**
 * The body of a run request: the original's names and defaults. `rtspUrl`'s form is checked here; whether a file
 * exists or a host is allowed is checked by the handler (I/O), with the same 422.
 */
export function runRequestSchema(mediaRoot: string | undefined): Joi.ObjectSchema<RunRequest> {
  return Joi.object<RunRequest, true>({
    rtspUrl: Joi.string()
      .max(2048)
      .required()
      .custom((value: string, helpers) => {
        const problem = streamSourceProblem(value, mediaRoot);
        return problem ? helpers.message({ custom: `rtspUrl ${problem}` }) : value;
      })
      .description(
        'The stream: rtsp:// or rtsps:// with a valid host (user:password@ accepted, never shown), or a file path ' +
          'relative to CAPTION_RUNS_MEDIA_ROOT when it is set',
      ),
    modelName: text(253)
      .trim()
      .min(1)
      .description('A name from GET /api/vlm-models; default VLM_MODEL, or the offline captioner without a VLM'),
    prompt: text(8192).trim().min(1).default(DEFAULT_PROMPT).description('Instruction for each caption (VLM)'),
    maxNewTokens: Joi.number().integer().min(1).max(4096).default(70).description('Longest caption, in tokens'),
    pipelineName: Joi.string()
      .valid(...PIPELINES.map((p) => p.pipeline_name))
      .description('A pipeline from GET /api/pipelines; default: chosen by pipelineType, else by the model'),
    pipelineType: Joi.string()
      .valid(...CAPTION_PIPELINE_TYPES)
      .description('detection or non-detection; must match pipelineName when both are given'),
    detectionModelName: text(253).trim().min(1).description('A name from GET /api/detection-models'),
    detectionThreshold: Joi.number().min(0).max(1).default(0.5).description('Lowest detection score kept'),
    runName: text(253).allow('').default('').description('Name of the run; its sanitised form is the runId'),
    frameRate: Joi.number().min(0).max(60).default(1).description('Frames sampled per second; 0: every frame'),
    chunkSize: Joi.number().integer().min(1).max(64).default(1).description('Frames per caption'),
    frameWidth: Joi.number().integer().min(1).max(7680).description('Width frames are scaled to'),
    frameHeight: Joi.number().integer().min(1).max(4320).description('Height frames are scaled to'),
    alerts: Joi.array()
      .items(alertSchema)
      .max(CAPTION_RUN_MAX_ALERTS)
      .default([])
      .description('Alert rules: each raises an alert to alert-dispatch, with the frame, once per matching chunk'),
  })
    .messages({ 'object.base': 'The request body must be a JSON object' })
    .label('RunRequest');
}
