import { Type, type Static } from '@sinclair/typebox';
import { conditionsSchema, observedGenerationSchema, type ArgusResource } from './meta.js';
import { stringEnum, strictObject, timestamp } from './schema-helpers.js';

/**
 * Name of the worker that runs a CaptionRun (`argus worker caption-run` in the cluster, the registered worker
 * embedded): the contract between the kind, the controller that asks for it and caption-runs, which implements it.
 */
export const CAPTION_RUN_WORKER = 'caption-run';
/** Phases of a caption run: Starting until the first frame is read, Reconnecting while the stream is away. */
export const CAPTION_RUN_PHASES = ['Starting', 'Running', 'Reconnecting', 'Failed', 'Stopped'] as const;
/** Phases a run never leaves. */
export const TERMINAL_CAPTION_RUN_PHASES: readonly CaptionRunPhase[] = ['Failed', 'Stopped'];
/** Kinds of pipeline: with a detector before the captioner, or without. */
export const CAPTION_PIPELINE_TYPES = ['detection', 'non-detection'] as const;
/** Most alert rules one run may carry. */
export const CAPTION_RUN_MAX_ALERTS = 32;

export const captionRunAlertSchema = strictObject(
  {
    name: Type.String({ description: 'Name of the rule, sent as the alert type.', minLength: 1, maxLength: 128 }),
    captionContains: Type.Optional(
      Type.String({ description: 'Fires when the caption contains this text (case-insensitive).', maxLength: 256 }),
    ),
    label: Type.Optional(
      Type.String({ description: 'Fires when the detector saw an object with this label.', maxLength: 128 }),
    ),
  },
  'An alert rule: a caption substring or a detected label; the alert carries the frame.',
);

export const captionRunSpecSchema = strictObject(
  {
    rtspUrl: Type.String({
      description: 'The live stream to caption (rtsp:// or rtsps://), or a file below the media root (demos).',
      minLength: 1,
      maxLength: 2048,
    }),
    rtspPassword: Type.Optional(
      Type.String({
        description:
          "The stream's password, sealed by caption-runs (AES-256-GCM under CAPTION_RUNS_CREDENTIALS_KEY, bound to rtspUrl): never in the clear in the resource.",
        maxLength: 2048,
        pattern: '^v1:[A-Za-z0-9_-]+$',
      }),
    ),
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
    runId: Type.Optional(
      Type.String({
        description: 'The id users see (runName sanitised, or random hex); the MQTT topic ends with it.',
        minLength: 1,
        maxLength: 128,
        pattern: '^[A-Za-z0-9_-]+$',
      }),
    ),
    peerId: Type.Optional(
      Type.String({ description: 'Id of the stream peer: s and 7 hex digits.', pattern: '^s[0-9a-f]{7}$' }),
    ),
    pipelineType: Type.Optional(stringEnum(CAPTION_PIPELINE_TYPES, 'detection or non-detection.')),
    detectionThreshold: Type.Optional(
      Type.Number({ description: 'Lowest detection score kept, 0 to 1.', minimum: 0, maximum: 1 }),
    ),
    frameRate: Type.Optional(
      Type.Number({ description: 'Frames sampled per second; 0: every frame of the stream.', minimum: 0, maximum: 60 }),
    ),
    chunkSize: Type.Optional(
      Type.Integer({ description: 'Frames per caption (the last frame of a chunk is sent).', minimum: 1, maximum: 64 }),
    ),
    frameWidth: Type.Optional(Type.Integer({ description: 'Width frames are scaled to.', minimum: 1, maximum: 7680 })),
    frameHeight: Type.Optional(
      Type.Integer({ description: 'Height frames are scaled to.', minimum: 1, maximum: 4320 }),
    ),
    alerts: Type.Optional(
      Type.Array(captionRunAlertSchema, {
        description: 'Alert rules checked on every caption.',
        maxItems: CAPTION_RUN_MAX_ALERTS,
      }),
    ),
    stopRequested: Type.Optional(
      Type.Boolean({ description: 'Set by DELETE: the workload stops and the run ends Stopped (kept for retention).' }),
    ),
  },
  'What to caption and how.',
);

export const captionRunStatusSchema = strictObject(
  {
    phase: Type.Optional(stringEnum(CAPTION_RUN_PHASES, 'Starting, Running, Reconnecting, Failed or Stopped.')),
    message: Type.Optional(Type.String({ description: 'Detail of the phase.', maxLength: 1024 })),
    pipelineId: Type.Optional(Type.String({ description: 'Id of the running pipeline instance.', maxLength: 253 })),
    peerId: Type.Optional(Type.String({ description: 'Id of the stream peer.', maxLength: 253 })),
    mqttTopic: Type.Optional(
      Type.String({ description: 'Topic the run publishes on: live-video-captioning/<runId>.', maxLength: 512 }),
    ),
    startTime: Type.Optional(timestamp('When the run started.')),
    finishedTime: Type.Optional(timestamp('When the run ended Stopped or Failed (retention counts from it).')),
    framesProcessed: Type.Optional(Type.Integer({ description: 'Frames read and sampled so far.', minimum: 0 })),
    captionsPublished: Type.Optional(Type.Integer({ description: 'Captions published so far.', minimum: 0 })),
    reconnects: Type.Optional(Type.Integer({ description: 'Times the stream was opened again.', minimum: 0 })),
    lastCaptionTime: Type.Optional(timestamp('When the last caption was published.')),
    lastError: Type.Optional(Type.String({ description: 'The last failure seen (stream, model).', maxLength: 1024 })),
    conditions: conditionsSchema(),
    observedGeneration: observedGenerationSchema(),
  },
  'What the run is doing.',
);

export type CaptionRunPhase = (typeof CAPTION_RUN_PHASES)[number];
export type CaptionPipelineType = (typeof CAPTION_PIPELINE_TYPES)[number];
export type CaptionRunAlert = Static<typeof captionRunAlertSchema>;
export type CaptionRunSpec = Static<typeof captionRunSpecSchema>;
export type CaptionRunStatus = Static<typeof captionRunStatusSchema>;

/** One live caption run on an RTSP stream (caption-runs). */
export type CaptionRun = ArgusResource<'CaptionRun', CaptionRunSpec, CaptionRunStatus>;
