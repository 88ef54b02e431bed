import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import type { EventQuery, Recorder } from '../recorder/recorder.js';

/** Longest camera name (a Kubernetes object name: CameraWatcher resources are named after cameras). */
export const CAMERA_NAME_MAX = 253;

/** Most events one GET /events answers. */
export const EVENTS_LIMIT_MAX = 1000;

/** A camera as answered (Camera: both fields always sent). */
const cameraBody = Joi.object({
  name: Joi.string().required(),
  labels: Joi.array().items(Joi.string()).required().description("Tracked object labels (Frigate's objects.track)"),
}).label('Camera');

/** An event in Frigate's `/api/events` shape (RecorderEvent: every field always sent, null where unknown). */
export const eventBody = Joi.object({
  id: Joi.string().required(),
  camera: Joi.string().required(),
  label: Joi.string().required(),
  sub_label: Joi.string().allow(null).required(),
  zones: Joi.array().items(Joi.string()).required(),
  start_time: Joi.number().required().description('Unix seconds'),
  end_time: Joi.number().allow(null).required().description('Unix seconds; null while the event is in progress'),
  has_clip: Joi.boolean().required(),
  has_snapshot: Joi.boolean().required(),
  top_score: Joi.number().allow(null).required(),
  data: Joi.object()
    .unknown(true)
    .required()
    .description("Frigate's event data: box, region, score, type, description, …"),
}).label('RecorderEvent');

const eventsQuery = Joi.object<Omit<EventQuery, 'analyse' | 'oldestFirst'>, true>({
  camera: Joi.string().min(1).max(CAMERA_NAME_MAX).required().description('The camera (required)'),
  after: Joi.number().min(0).description('Only events that started after this Unix time (seconds)'),
  before: Joi.number().min(0).description('Only events that started before this Unix time (seconds)'),
  limit: Joi.number().integer().min(1).max(EVENTS_LIMIT_MAX).default(100).description('Most events answered'),
});

const badGateway = { description: 'The configured recorder (Frigate) does not answer; `detail` says why' };

/** GET /cameras and GET /events, read from the recorder. */
export function recorderRoutes(recorder: Recorder): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/cameras',
      summary: 'List configured cameras and their tracked object types',
      tags: ['recorder'],
      responses: {
        200: { description: 'Every camera the recorder knows, by name', schema: Joi.array().items(cameraBody) },
        502: badGateway,
      },
      handler: async (ctx) => {
        ctx.body = await recorder.cameras();
      },
    }),
    defineRoute({
      method: 'get',
      path: '/events',
      summary: 'List events of a camera from the recorder, newest first',
      tags: ['recorder'],
      request: { query: eventsQuery },
      responses: {
        200: {
          description:
            "The camera's events, newest first: Frigate's, or with the recordings directory the detections of the segments a watcher analysed",
          schema: Joi.array().items(eventBody),
        },
        422: { description: '`camera` missing, or a parameter out of range' },
        502: badGateway,
      },
      handler: async (ctx) => {
        ctx.body = await recorder.events(ctx.state.query);
      },
    }),
  ];
}
