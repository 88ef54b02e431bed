import Joi from 'joi';
import { DEDUP_DEFAULTS } from './dedup.js';
import {
  PAYLOAD_ENCODINGS,
  PAYLOAD_KINDS,
  type DedupSpec,
  type EscalationSpec,
  type FlexibleAlert,
  type FlexibleAlertFields,
  type ReceivedActionRequest,
} from './types.js';

/** A tool name: built-in or `<server>__<tool>` for MCP tools. */
export const toolNameSchema = Joi.string()
  .min(1)
  .max(128)
  .pattern(/^[A-Za-z0-9_.:-]+$/);

/** A list of tool names. */
export const toolListSchema = Joi.array().items(toolNameSchema).max(64);

/** Map of tool name to argument object. */
export const toolArgumentsSchema = Joi.object()
  .pattern(toolNameSchema, Joi.object().unknown(true))
  .description('Map of tool name to argument object, e.g. {"trigger_webhook": {"url": "https://..."}}');

/** Dedup settings; sub-fields default to strategy field_hash, fields [alert_name, source_id], 60 s, on_missing skip. */
export const dedupSchema = Joi.object<DedupSpec, true>({
  enabled: Joi.boolean().default(false),
  strategy: Joi.string().valid('field_hash').default(DEDUP_DEFAULTS.strategy),
  fields: Joi.array()
    .items(Joi.string().min(1).max(256))
    .min(1)
    .max(32)
    .default(() => [...DEDUP_DEFAULTS.fields])
    .description('Dotted paths into the action request (metadata.* included)'),
  window_seconds: Joi.number().integer().min(1).max(86_400).default(DEDUP_DEFAULTS.window_seconds),
  on_missing: Joi.string().valid('skip', 'hash_missing').default(DEDUP_DEFAULTS.on_missing),
});

/** Escalation settings. */
export const escalationSchema = Joi.object<EscalationSpec, true>({
  threshold_consecutive: Joi.number().integer().min(1).allow(null),
  additional_tools: toolListSchema.default([]),
  count_window_seconds: Joi.number()
    .integer()
    .min(1)
    .max(86_400)
    .description(
      'Count the consecutive YES alerts of this alert_name and source_id in the service (every replica) for this ' +
        "fixed window; the larger of that count and the request's consecutive_count is compared with the threshold",
    ),
});

/** Infers `encoding` from the data field present when the caller left it out. */
const inferEncoding = (payload: { data_base64?: unknown; uri?: unknown; data_text?: unknown }) =>
  payload.data_base64 !== undefined
    ? 'base64'
    : payload.uri !== undefined
      ? 'uri'
      : payload.data_text !== undefined
        ? 'raw'
        : 'base64';

/** A multimodal payload: base64 needs valid `data_base64`, uri needs `uri`, raw needs `data_text`. */
export const payloadSchema = Joi.object({
  kind: Joi.string()
    .valid(...PAYLOAD_KINDS)
    .required(),
  mime_type: Joi.string().max(255),
  encoding: Joi.string()
    .valid(...PAYLOAD_ENCODINGS)
    .default(inferEncoding)
    .description('Inferred from the data field present when left out'),
  data_base64: Joi.when('encoding', {
    is: 'base64',
    then: Joi.string().base64({ paddingRequired: false }).required(),
    otherwise: Joi.string().allow(''),
  }),
  uri: Joi.when('encoding', {
    is: 'uri',
    then: Joi.string()
      .required()
      .custom((value: string) => {
        new URL(value); // throws for anything that is not an absolute URI
        return value;
      })
      .messages({ 'any.custom': '{#label} must be an absolute URI' }),
    otherwise: Joi.string().allow(''),
  }),
  data_text: Joi.when('encoding', {
    is: 'raw',
    then: Joi.string().allow('').required(),
    otherwise: Joi.string().allow(''),
  }),
  metadata: Joi.object().unknown(true),
});

const answerSchema = Joi.string()
  .uppercase()
  .valid('YES', 'NO')
  .default('YES')
  .description('YES or NO (case-insensitive); tools run only for YES');

/**
 * The action request of POST /api/v1/actions/execute. One rule for unknown fields, at every level: an object whose
 * fields the contract lists (the request, `dedup`, `escalation`, each payload) refuses a field it does not know (422
 * naming it), so a misspelt setting never passes silently; `metadata`, payload `metadata` and each tool's argument
 * object are free-form.
 */
export const actionRequestSchema = Joi.object<ReceivedActionRequest, true>({
  event_id: Joi.string().min(1).max(256),
  source_id: Joi.string().min(1).max(256).required(),
  alert_name: Joi.string().min(1).max(256).required(),
  answer: answerSchema,
  reason: Joi.string().allow('').max(10_000).default(''),
  consecutive_count: Joi.number().integer().min(1).default(1),
  escalated: Joi.boolean().default(false),
  tools: toolListSchema,
  tool_arguments: toolArgumentsSchema,
  escalation: escalationSchema,
  payloads: Joi.array().items(payloadSchema).max(32).default([]),
  dedup: dedupSchema,
  metadata: Joi.object().unknown(true).description('Extension: free-form context, reachable from dedup fields'),
  timestamp: Joi.string().isoDate(),
});

/** The flexible alert of POST /api/v1/alerts: any object; recognised fields are type-checked. */
export const flexibleAlertSchema = Joi.object<FlexibleAlert, true, FlexibleAlertFields>({
  alert_type: Joi.string().min(1).max(256).default('UNKNOWN'),
  source_id: Joi.string().min(1).max(256).default('unknown'),
  alert_name: Joi.string().min(1).max(256),
  answer: answerSchema,
  reason: Joi.string().allow('').max(10_000).default(''),
  metadata: Joi.object().unknown(true).default({}),
  timestamp: Joi.string().isoDate(),
  tools: toolListSchema.description('Defaults to the subscription of alert_name, else [log_alert]'),
  payloads: Joi.array().items(payloadSchema).max(32).default([]),
  event_id: Joi.string().min(1).max(256),
  consecutive_count: Joi.number().integer().min(1),
  escalated: Joi.boolean(),
  tool_arguments: toolArgumentsSchema,
  escalation: escalationSchema,
  dedup: dedupSchema,
}).unknown(true);
