import Joi from 'joi';
import { defineRoute, HttpError, requestSignal, type RouteSpec } from '../../lib/http/index.js';
import type { Probe } from '../health/reachability.js';
import { CAMERA_NAME_MAX } from './recorder-routes.js';
import type { WatcherBook } from '../watchers/watcher-book.js';

/** Most cameras one request may switch. */
export const WATCHER_REQUEST_MAX = 256;

// eslint-disable-next-line no-control-regex
const CAMERA_NAME = /^[^\u0000-\u001f\u007f]+$/;

const watcherRequest = Joi.object<{ cameras: Array<Record<string, boolean>> }, true>({
  cameras: Joi.array()
    .items(
      Joi.object()
        .pattern(Joi.string().min(1).max(CAMERA_NAME_MAX).pattern(CAMERA_NAME), Joi.boolean().required())
        .min(1)
        .description('One camera name → true (enable its watcher) or false (disable it)'),
    )
    .min(1)
    .max(WATCHER_REQUEST_MAX)
    .required(),
}).label('CameraWatcherRequest');

const mappingBody = Joi.object()
  .pattern(Joi.string(), Joi.boolean())
  .description('Camera name → whether its watcher is enabled');

const mappingResponse = Joi.object({
  mapping: mappingBody.required(),
  warning: Joi.string().description('Present when the store lookup failed: the mapping is this replica’s overrides'),
}).label('CameraWatcherMappingResponse');

/** POST /watchers/enable, GET /watchers/mapping and its alias GET /watchers/enable. */
export function watcherRoutes(watchers: WatcherBook, search: Probe): RouteSpec[] {
  const getMapping = (path: string, summary: string) =>
    defineRoute({
      method: 'get',
      path,
      summary,
      tags: ['watchers'],
      responses: { 200: { description: 'The mapping', schema: mappingResponse } },
      handler: async (ctx) => {
        ctx.body = await watchers.mapping();
      },
    });
  return [
    defineRoute({
      method: 'post',
      path: '/watchers/enable',
      summary: 'Enable or disable watchers; 503 when the search service is unreachable',
      description:
        "Checks first that the search service (dataprep's health) answers: when it does not, 503 and nothing " +
        'changes. Then writes each camera’s CameraWatcher resource (`spec.enabled`); the CameraWatcher controller ' +
        'starts or stops its watcher. A camera named twice: the last value counts.',
      tags: ['watchers'],
      request: { body: watcherRequest },
      responses: {
        200: {
          description:
            'The whole persisted mapping after the change, and the cameras this request enabled and disabled',
          schema: Joi.object({
            mapping: mappingBody.required(),
            enabled: Joi.array().items(Joi.string()).required(),
            disabled: Joi.array().items(Joi.string()).required(),
          }).label('CameraWatcherUpdateResponse'),
        },
        422: { description: 'Invalid request: every invalid field listed' },
        503: { description: 'The search service (or the watcher store) is unreachable; nothing changed' },
      },
      handler: async (ctx) => {
        const wanted = new Map<string, boolean>();
        for (const entry of ctx.state.body.cameras) {
          for (const [camera, enabled] of Object.entries(entry)) wanted.set(camera, enabled);
        }
        const reachable = await search(requestSignal(ctx));
        if (!reachable.reachable) {
          throw new HttpError(503, `Search service is unreachable (${reachable.detail}); no watcher was changed`);
        }
        await watchers.set(wanted);
        const { mapping } = await watchers.mapping();
        ctx.body = {
          mapping,
          enabled: [...wanted].filter(([, on]) => on).map(([camera]) => camera),
          disabled: [...wanted].filter(([, on]) => !on).map(([camera]) => camera),
        };
      },
    }),
    getMapping('/watchers/mapping', 'The watcher mapping: persisted store merged with runtime overrides'),
    getMapping('/watchers/enable', 'Alias of GET /watchers/mapping'),
  ];
}
