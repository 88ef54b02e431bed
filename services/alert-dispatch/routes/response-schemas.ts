import Joi from 'joi';
import { detailStyle } from '../../lib/http/index.js';

/** Body of every error answer, as the service's ErrorStyle renders it. */
export const errorBody = detailStyle().body;

/** What became of each requested tool; the `alert_action` stream event carries the same list. */
export const toolOutcomes = Joi.array()
  .items(
    Joi.object({
      name: Joi.string().required(),
      outcome: Joi.string().valid('succeeded', 'failed', 'unavailable', 'skipped').required(),
      reason: Joi.string().description('Why it failed, was unavailable (unknown or disabled) or was skipped'),
    }),
  )
  .description('One entry per tools_requested, same order');

/** The action response (DispatchResult: every field is always sent). */
export const actionResponseBody = Joi.object({
  event_id: Joi.string().required(),
  source_id: Joi.string().required(),
  alert_name: Joi.string().required(),
  actions_taken: Joi.array()
    .items(Joi.string())
    .required()
    .description('Tools that completed successfully, in resolved order'),
  snapshot_path: Joi.string().allow(null).required(),
  duration_ms: Joi.number().required(),
  timestamp: Joi.string().required().description('ISO-8601 with offset'),
  suppressed: Joi.string().valid('answer_no', 'duplicate').allow(null).required().description('Why no tool ran, if so'),
  mode: Joi.string().valid('agent', 'rules', 'none').required().description('Who chose the tools'),
  tools_requested: Joi.array()
    .items(Joi.string())
    .required()
    .description('Resolved tool list (request, subscription, fallback, escalation)'),
  failed_tools: Joi.array()
    .items(Joi.object({ name: Joi.string().required(), error: Joi.string().required() }))
    .required(),
  tool_outcomes: toolOutcomes.required(),
});

/** The flexible alert response. */
export const flexibleAlertResponseBody = Joi.object({
  status: Joi.string().valid('accepted').required(),
  alert_type: Joi.string().required(),
  timestamp: Joi.string().required().description('ISO-8601 with offset'),
  event_id: Joi.string().required().description('Id of the dispatch started for this alert'),
});

/** One entry of the tool list. */
export const toolInfoBody = Joi.object({
  name: Joi.string().required(),
  enabled: Joi.boolean().required(),
  description: Joi.string().allow('').required(),
  requires_env: Joi.array().items(Joi.string()).required(),
  source: Joi.string().valid('builtin', 'mcp').required(),
  server: Joi.string().description('MCP server of an MCP tool'),
});

/** The events of the stream (GET /events, and the frames of /ws): each event's `data`. */
export const streamEvents = {
  init: Joi.object({
    service: Joi.string().required(),
    version: Joi.string().required(),
    adk_enabled: Joi.boolean().required().description('Agent mode: LLM_BASE_URL configured'),
    mcp_enabled: Joi.boolean().required(),
    server_time: Joi.string().required().description('ISO-8601'),
  }).description('Sent once on connect'),
  alert_action: Joi.object({
    event_id: Joi.string().required(),
    source_id: Joi.string().required(),
    alert_name: Joi.string().required(),
    answer: Joi.string().valid('YES', 'NO').required(),
    reason: Joi.string().allow('').required(),
    actions_taken: Joi.array().items(Joi.string()).required(),
    tools_requested: Joi.array().items(Joi.string()).required(),
    tool_outcomes: toolOutcomes.required(),
    consecutive_count: Joi.number().integer(),
    escalated: Joi.boolean().required(),
    snapshot_path: Joi.string().allow(null),
    payload_kinds: Joi.array().items(Joi.string()).required(),
    duration_ms: Joi.number().required(),
    timestamp: Joi.string().required().description('ISO-8601 with offset'),
  }).description('After each dispatch'),
  keepalive: Joi.object({ timestamp: Joi.string().required().description('ISO-8601') }).description(
    'Every ALERT_SSE_KEEPALIVE_MS (15 s by default)',
  ),
  error: Joi.object({
    message: Joi.string().required(),
    event: Joi.string().description('The event that could not be sent'),
  }).description('A stream-level failure (an event that could not be serialised or replayed)'),
};
