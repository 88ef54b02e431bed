import Joi from 'joi';
import { CAMERA_RULE_MAX_RESULTS } from '../../../operator/api/index.js';
import { defineRoute, type RouteSpec } from '../../lib/http/index.js';
import type { RuleBook } from '../rules/rule-book.js';

const unavailable = { description: 'The rule store (control plane) does not answer' };

/** GET /rules/responses/ and GET /rules/search-responses/ (registered before /rules/{rule_id}). */
export function responseRoutes(rules: RuleBook): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/rules/responses/',
      summary: 'Results of all non-search rules: {rule_id: {event_id: result | "pending"}}, newest first',
      description:
        `Per rule (summarize and alert), its latest ${CAMERA_RULE_MAX_RESULTS} events, newest first: "pending" while ` +
        'the action runs, the summary (summarize) or what was sent (alert) once it succeeded, "failed: <why>" once ' +
        'its retries are spent.',
      tags: ['rules'],
      responses: {
        200: {
          description: 'Results by rule id, then by event id',
          schema: Joi.object().pattern(Joi.string(), Joi.object().pattern(Joi.string(), Joi.string())),
        },
        503: unavailable,
      },
      handler: async (ctx) => {
        const body: Record<string, Record<string, string>> = {};
        for (const { rule, results } of await rules.withResults()) {
          if (rule.action === 'add_to_search') continue;
          body[rule.id] = Object.fromEntries(
            results.map((r) => [
              r.eventId,
              r.state === 'pending'
                ? 'pending'
                : r.state === 'failed'
                  ? `failed: ${r.message ?? 'unknown error'}`
                  : (r.result ?? r.message ?? 'done'),
            ]),
          );
        }
        ctx.body = body;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules/search-responses/',
      summary:
        'Search results of all rules that add to search: {rule_id: [{event_id, video_id, bucket_name, status, message}]}',
      description:
        `Per add_to_search rule, its latest ${CAMERA_RULE_MAX_RESULTS} events, newest first. \`status\` is pending, ` +
        "succeeded or failed; `video_id` and `bucket_name` (dataprep's) are null until the media is indexed; " +
        '`message` says what was indexed (clip or snapshot) or why it failed.',
      tags: ['rules'],
      responses: {
        200: {
          description: 'Search results by rule id',
          schema: Joi.object().pattern(
            Joi.string(),
            Joi.array().items(
              Joi.object({
                event_id: Joi.string().required(),
                video_id: Joi.string().allow(null).required(),
                bucket_name: Joi.string().allow(null).required(),
                status: Joi.string().valid('pending', 'succeeded', 'failed').required(),
                message: Joi.string().allow(null).required(),
              }).label('SearchResponse'),
            ),
          ),
        },
        503: unavailable,
      },
      handler: async (ctx) => {
        const body: Record<string, unknown[]> = {};
        for (const { rule, results } of await rules.withResults()) {
          if (rule.action !== 'add_to_search') continue;
          body[rule.id] = results.map((r) => ({
            event_id: r.eventId,
            video_id: r.videoId ?? null,
            bucket_name: r.bucketName ?? null,
            status: r.state,
            message: r.message ?? null,
          }));
        }
        ctx.body = body;
      },
    }),
  ];
}
