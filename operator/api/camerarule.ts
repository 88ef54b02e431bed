import { Type, type Static } from '@sinclair/typebox';
import { observedGenerationSchema, type ArgusResource } from './meta.js';
import { stringEnum, strictObject, timestamp } from './schema-helpers.js';

/** What a camera rule does with an event it matches (camera-rules implements each). */
export const CAMERA_RULE_ACTIONS = ['add_to_search', 'summarize', 'alert'] as const;
/** Which recorder event fires a rule: when the tracked object appears (`new`) or when it has ended (`end`). */
export const CAMERA_RULE_EVENT_TYPES = ['new', 'end'] as const;
/** States of one event's action: claimed and running, done, or given up after its retries. */
export const CAMERA_RULE_RESULT_STATES = ['pending', 'succeeded', 'failed'] as const;
/** Most results a rule keeps (newest first): they also make each event fire the rule once. */
export const CAMERA_RULE_MAX_RESULTS = 50;
/** Longest rule id. */
export const CAMERA_RULE_ID_MAX = 128;

export const cameraRuleSpecSchema = strictObject(
  {
    id: Type.String({
      description: 'The rule id clients use (any text); the object name is derived from it.',
      minLength: 1,
      maxLength: CAMERA_RULE_ID_MAX,
    }),
    label: Type.String({
      description: 'Detection label the rule matches (e.g. person).',
      minLength: 1,
      maxLength: 128,
    }),
    action: stringEnum(CAMERA_RULE_ACTIONS, 'add_to_search, summarize or alert.'),
    camera: Type.Optional(
      Type.String({ description: 'Only events of this camera; absent: every camera.', minLength: 1, maxLength: 253 }),
    ),
    source: Type.Optional(
      Type.String({
        description: 'Only events of this source (the recorder kind, e.g. frigate); absent: any.',
        minLength: 1,
        maxLength: 253,
      }),
    ),
    eventType: Type.Optional(stringEnum(CAMERA_RULE_EVENT_TYPES, 'Fire on new or end events (default end).')),
  },
  'A label-to-action rule of camera-rules.',
);

export const cameraRuleResultSchema = strictObject(
  {
    eventId: Type.String({ description: 'The recorder event.', minLength: 1, maxLength: 256 }),
    camera: Type.String({ description: 'Its camera.', maxLength: 253 }),
    state: stringEnum(CAMERA_RULE_RESULT_STATES, 'pending, succeeded or failed.'),
    message: Type.Optional(Type.String({ description: 'What happened, or why it failed.', maxLength: 1024 })),
    result: Type.Optional(Type.String({ description: 'The summary (summarize) or what was sent.', maxLength: 4096 })),
    videoId: Type.Optional(Type.String({ description: 'add_to_search: the video id dataprep gave.', maxLength: 256 })),
    bucketName: Type.Optional(Type.String({ description: 'add_to_search: its bucket.', maxLength: 256 })),
    attempts: Type.Integer({ description: 'Attempts made so far.', minimum: 0, maximum: 1000 }),
    updatedAt: timestamp('When the result last changed.'),
  },
  "One event's action result.",
);

export const cameraRuleStatusSchema = strictObject(
  {
    count: Type.Optional(Type.Integer({ description: 'How many recorder events the rule has matched.', minimum: 0 })),
    lastEventId: Type.Optional(Type.String({ description: 'The last event it matched.', maxLength: 256 })),
    results: Type.Optional(
      Type.Array(cameraRuleResultSchema, {
        description: 'The latest events it fired on, newest first (each event fires a rule once).',
        maxItems: CAMERA_RULE_MAX_RESULTS,
      }),
    ),
    observedGeneration: observedGenerationSchema(),
  },
  'What the rule has matched.',
);

export type CameraRuleAction = (typeof CAMERA_RULE_ACTIONS)[number];
export type CameraRuleEventType = (typeof CAMERA_RULE_EVENT_TYPES)[number];
export type CameraRuleSpec = Static<typeof cameraRuleSpecSchema>;
export type CameraRuleStatus = Static<typeof cameraRuleStatusSchema>;
export type CameraRuleResult = Static<typeof cameraRuleResultSchema>;
export type CameraRuleResultState = (typeof CAMERA_RULE_RESULT_STATES)[number];

/** One rule of camera-rules: persisted by the API server (or the embedded store), shared by every replica. */
export type CameraRule = ArgusResource<'CameraRule', CameraRuleSpec, CameraRuleStatus>;
