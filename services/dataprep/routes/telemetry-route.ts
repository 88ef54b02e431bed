import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import type { DataprepServices } from '../runtime/services.js';
import { errorBody } from './schemas.js';

/** GET /telemetry: the most recent processing records, newest first. */
export function telemetryRoute(services: DataprepServices): RouteSpec {
  const max = services.config.telemetryMaxRecords;
  return defineRoute({
    method: 'get',
    path: '/telemetry',
    summary: 'Recent processing telemetry, newest first',
    tags: ['telemetry'],
    request: {
      query: Joi.object<{ limit: number }, true>({
        limit: Joi.number().integer().min(1).max(max).default(Math.min(100, max)),
      }),
    },
    responses: {
      200: {
        description: 'Telemetry records',
        schema: Joi.object({
          count: Joi.number().integer().required(),
          items: Joi.array().items(Joi.object().unknown()).required(),
        }),
      },
      400: { description: 'limit out of range', schema: errorBody() },
    },
    handler: async (ctx) => {
      const items = await services.telemetry.list(ctx.state.query.limit);
      ctx.body = { count: items.length, items };
    },
  });
}
