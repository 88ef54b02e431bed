import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import type { Probe, Reachability } from '../health/reachability.js';

/** The interface version of the contract (service B). */
export const API_VERSION = '1.0.0';

/** What `/health` asks: the recorder, the search service (dataprep), alert-dispatch and, with Frigate, the broker. */
export interface HealthProbes {
  recorderKind: string;
  recorder: Probe;
  search: Probe;
  alerts: Probe;
  /** undefined when no broker is configured. */
  broker?: Probe;
}

const reachability = Joi.object({
  reachable: Joi.boolean().required(),
  detail: Joi.string().description('What was asked and what answered (no credentials)'),
});

const healthBody = Joi.object({
  status: Joi.string()
    .valid('healthy', 'degraded')
    .description('degraded when any dependency does not answer')
    .required(),
  service: Joi.string().valid('camera-rules').required(),
  version: Joi.string().required(),
  recorder: reachability.keys({ kind: Joi.string().valid('frigate', 'directory').required() }).required(),
  search: reachability.description("dataprep's health (rules that add to search, watcher updates)").required(),
  alerts: reachability.description("alert-dispatch's health (rules that alert)").required(),
  broker: reachability.allow(null).description("Frigate's MQTT broker; null when none is configured").required(),
}).label('CameraRulesHealth');

/** GET / and GET /health. */
export function healthRoutes(probes: HealthProbes): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/',
      summary: 'Service health check: the service answers',
      tags: ['health'],
      responses: {
        200: {
          description: 'The service is up',
          schema: Joi.object({
            status: Joi.string().valid('ok').required(),
            service: Joi.string().valid('camera-rules').required(),
            version: Joi.string().required(),
          }).label('CameraRulesRoot'),
        },
      },
      handler: (ctx) => {
        ctx.body = { status: 'ok', service: 'camera-rules', version: API_VERSION };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/health',
      summary: 'Detailed health: whether the recorder, the search service, alert-dispatch and the broker answer',
      description:
        'Always 200 while the service runs (a dependency that does not answer makes `status` degraded, not the ' +
        'service down); each dependency is asked once per request, in parallel, within its configured time-out.',
      tags: ['health'],
      responses: { 200: { description: 'Health of the service and its dependencies', schema: healthBody } },
      handler: async (ctx) => {
        const [recorder, search, alerts, broker] = await Promise.all([
          probes.recorder(),
          probes.search(),
          probes.alerts(),
          probes.broker?.() ?? Promise.resolve(null),
        ]);
        const all: Array<Reachability | null> = [recorder, search, alerts, broker];
        ctx.body = {
          status: all.every((r) => r === null || r.reachable) ? 'healthy' : 'degraded',
          service: 'camera-rules',
          version: API_VERSION,
          recorder: { kind: probes.recorderKind, ...recorder },
          search,
          alerts,
          broker,
        };
      },
    }),
  ];
}
