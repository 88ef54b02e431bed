import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import { isoWithOffset, type Clock } from '../dispatch/clock.js';
import { DEDUP_DEFAULTS } from '../dispatch/dedup.js';
import type { SubscriptionStore } from '../subscriptions/subscription-store.js';

/** What the health and subscription routes read. */
export interface InfoRouteDeps {
  subscriptions: SubscriptionStore;
  agentEnabled: boolean;
  mcpEnabled: () => boolean;
  clock: Clock;
  startedAt: number;
}

/** A subscription as answered: entries are validated with their defaults applied, and the route fills in the rest. */
const subscriptionBody = Joi.object({
  alert_name: Joi.string().required(),
  tools: Joi.array().items(Joi.string()).required(),
  tool_arguments: Joi.object().unknown(true).required(),
  dedup: Joi.object({
    enabled: Joi.boolean().required(),
    strategy: Joi.string().required(),
    fields: Joi.array().items(Joi.string()).required(),
    window_seconds: Joi.number().required(),
    on_missing: Joi.string().required(),
  }).required(),
  escalation: Joi.object({
    threshold_consecutive: Joi.number().allow(null).required(),
    additional_tools: Joi.array().items(Joi.string()).required(),
  }).required(),
});

/** GET /subscriptions and GET /health. */
export function infoRoutes(deps: InfoRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/subscriptions',
      summary: 'List subscription entries loaded from configuration',
      tags: ['subscriptions'],
      responses: {
        200: {
          description:
            'Subscription list; `file` and `last_error` tell where it came from and why a reload was rejected',
          schema: Joi.object({
            subscriptions: Joi.array().items(subscriptionBody).required(),
            count: Joi.number().required(),
            file: Joi.string().allow(null).required(),
            loaded_at: Joi.string().allow(null).required(),
            last_error: Joi.string().allow(null).required(),
          }),
        },
      },
      handler: (ctx) => {
        const subscriptions = deps.subscriptions.list().map((s) => ({
          alert_name: s.alert_name,
          tools: s.tools,
          tool_arguments: s.tool_arguments,
          dedup: s.dedup ?? { enabled: false, ...DEDUP_DEFAULTS },
          escalation: s.escalation
            ? {
                threshold_consecutive: s.escalation.threshold_consecutive ?? null,
                additional_tools: s.escalation.additional_tools,
              }
            : { threshold_consecutive: null, additional_tools: [] },
        }));
        const status = deps.subscriptions.status();
        ctx.body = {
          subscriptions,
          count: subscriptions.length,
          file: status.file,
          loaded_at: status.loaded_at,
          last_error: status.error,
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/health',
      summary: 'Liveness probe',
      tags: ['health'],
      responses: {
        200: {
          description: 'Alive',
          schema: Joi.object({
            status: Joi.string().valid('healthy').required(),
            adk_enabled: Joi.boolean().description('Agent mode: LLM_BASE_URL configured').required(),
            mcp_enabled: Joi.boolean().required(),
            uptime_seconds: Joi.number().required(),
            timestamp: Joi.string().required(),
          }),
        },
      },
      handler: (ctx) => {
        const now = deps.clock();
        ctx.body = {
          status: 'healthy',
          adk_enabled: deps.agentEnabled,
          mcp_enabled: deps.mcpEnabled(),
          uptime_seconds: Math.round((performance.now() - deps.startedAt) / 100) / 10,
          timestamp: isoWithOffset(now),
        };
      },
    }),
  ];
}
