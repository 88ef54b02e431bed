import { Type, type Static } from '@sinclair/typebox';
import { conditionsSchema, observedGenerationSchema, type ArgusResource } from './meta.js';
import { stringEnum, strictObject, timestamp } from './schema-helpers.js';

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
