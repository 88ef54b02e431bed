import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';

/** GET /health: up, which captioner runs use by default, and whether runs can publish at all. */
export function healthRoute(vlmModel: string | undefined, canPublish: boolean): RouteSpec {
  const captioner = vlmModel ? `VLM configured (${vlmModel})` : 'no VLM configured (offline captions from detections)';
  const broker = canPublish ? '' : '; no MQTT broker configured (MQTT_BROKER): runs cannot be started';
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
      ctx.body = { status: 'healthy', message: `caption-runs is running; ${captioner}${broker}` };
    },
  });
}
