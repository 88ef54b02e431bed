import { Type, type Static } from '@sinclair/typebox';
import { conditionsSchema, observedGenerationSchema, type ArgusResource } from './meta.js';
import { stringEnum, strictObject, timestamp } from './schema-helpers.js';

/** Phases of a caption run. */
export const CAPTION_RUN_PHASES = ['Pending', 'Running', 'Failed', 'Stopped'] as const;

export const captionRunSpecSchema = strictObject(
  {
    rtspUrl: Type.String({
      description: 'The live stream to caption (rtsp:// or rtsps://).',
      minLength: 1,
      maxLength: 2048,
    }),
    prompt: Type.String({
      description: 'Instruction given to the vision-language model for each caption.',
      maxLength: 8192,
    }),
    modelName: Type.String({
      description: 'Vision-language model that writes the captions.',
      minLength: 1,
      maxLength: 253,
    }),
    pipelineName: Type.String({ description: 'Pipeline configuration the run uses.', minLength: 1, maxLength: 253 }),
    runName: Type.String({ description: 'Human-readable name of the run.', maxLength: 253 }),
    maxTokens: Type.Integer({ description: 'Upper bound of tokens per caption.', minimum: 1, maximum: 32768 }),
    detectionModel: Type.Optional(
      Type.String({ description: 'Object detection model run before captioning, if any.', maxLength: 253 }),
    ),
  },
  'What to caption and how.',
);

export const captionRunStatusSchema = strictObject(
  {
    phase: Type.Optional(stringEnum(CAPTION_RUN_PHASES, 'Pending, Running, Failed or Stopped.')),
    message: Type.Optional(Type.String({ description: 'Detail of the phase.', maxLength: 1024 })),
    pipelineId: Type.Optional(Type.String({ description: 'Id of the running pipeline instance.', maxLength: 253 })),
    peerId: Type.Optional(Type.String({ description: 'Id of the stream peer.', maxLength: 253 })),
    mqttTopic: Type.Optional(
      Type.String({ description: 'Topic the run publishes on: live-video-captioning/<runId>.', maxLength: 512 }),
    ),
    startTime: Type.Optional(timestamp('When the run started.')),
    conditions: conditionsSchema(),
    observedGeneration: observedGenerationSchema(),
  },
  'What the run is doing.',
);

export type CaptionRunPhase = (typeof CAPTION_RUN_PHASES)[number];
export type CaptionRunSpec = Static<typeof captionRunSpecSchema>;
export type CaptionRunStatus = Static<typeof captionRunStatusSchema>;

/** One live caption run on an RTSP stream (caption-runs). */
export type CaptionRun = ArgusResource<'CaptionRun', CaptionRunSpec, CaptionRunStatus>;
