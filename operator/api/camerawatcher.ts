import { Type, type Static } from '@sinclair/typebox';
import { conditionsSchema, observedGenerationSchema, type ArgusResource } from './meta.js';
import { stringEnum, strictObject, timestamp } from './schema-helpers.js';

/**
 * Name of the worker that follows one camera for a CameraWatcher (`argus worker camera-watcher` in the cluster, the
 * registered worker embedded): the contract between the kind, its controller and camera-rules, which implements it.
 */
export const CAMERA_WATCHER_WORKER = 'camera-watcher';
/** Phases of a camera watcher. */
export const CAMERA_WATCHER_PHASES = ['Pending', 'Watching', 'Stopped', 'Failed'] as const;

export const cameraWatcherSpecSchema = strictObject(
  {
    camera: Type.String({
      description: 'Camera name as the network video recorder knows it.',
      minLength: 1,
      maxLength: 253,
    }),
    enabled: Type.Boolean({ description: 'Watch the camera for new recorder events (true) or not (false).' }),
  },
  'Which camera to watch.',
);

export const cameraWatcherStatusSchema = strictObject(
  {
    phase: Type.Optional(stringEnum(CAMERA_WATCHER_PHASES, 'Pending, Watching, Stopped or Failed.')),
    message: Type.Optional(Type.String({ description: 'Detail of the phase.', maxLength: 1024 })),
    lastEventTime: Type.Optional(timestamp('When the watcher last saw a new recorder event.')),
    lastEventId: Type.Optional(
      Type.String({
        description: 'The last recorder event the watcher handled (written by its worker).',
        maxLength: 256,
      }),
    ),
    lastEventStart: Type.Optional(
      Type.Number({
        description: "That event's start (Unix seconds): the worker catches up with the recorder's events after it.",
        minimum: 0,
        maximum: 100_000_000_000,
      }),
    ),
    eventsHandled: Type.Optional(Type.Integer({ description: 'Recorder events the worker has handled.', minimum: 0 })),
    lastRecordingEnd: Type.Optional(
      Type.Number({
        description:
          "Where the worker's recordings reached search (Unix seconds): the end of the last recording it uploaded, or " +
          'of a settled stretch with none. It goes on from there after a restart.',
        minimum: 0,
        maximum: 100_000_000_000,
      }),
    ),
    recordingsIndexed: Type.Optional(
      Type.Integer({ description: 'Recording clips the worker has uploaded to search.', minimum: 0 }),
    ),
    conditions: conditionsSchema(),
    observedGeneration: observedGenerationSchema(),
  },
  'What the watcher is doing.',
);

export type CameraWatcherPhase = (typeof CAMERA_WATCHER_PHASES)[number];
export type CameraWatcherSpec = Static<typeof cameraWatcherSpecSchema>;
export type CameraWatcherStatus = Static<typeof cameraWatcherStatusSchema>;

/** One camera's directory watcher (camera-rules). */
export type CameraWatcher = ArgusResource<'CameraWatcher', CameraWatcherSpec, CameraWatcherStatus>;
