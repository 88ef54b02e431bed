import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';

/** GET /health: up, and which captioner runs use by default. */
export function healthRoute(vlmModel: string | undefined): RouteSpec {
  const captioner = vlmModel ? `VLM configured (${vlmModel})` : 'no VLM configured (offline captions from detections)';
  return defineRoute({
    method: 'get',
    path: '/health',
    summary: 'Service health and the default captioner',
    tags: ['health'],
    responses: {
      200: {
        description: 'The service is up',
        schema: Joi.object({
          status: Joi.string().valid('healthy').required(),
          message: Joi.string().required(),
        }).label('HealthBody'),
      },
    },
    handler: (ctx) => {
      ctx.body = { status: 'healthy', message: `caption-runs is running; ${captioner}` };
    },
  });
}
