import { isObject } from '../../lib/json/index.js';
import type { ActionRequest, ReceivedActionRequest } from './types.js';

/** Fields the shortcut handles; a body with any other field (payload data, dedup, timestamps…) goes to joi. */
const SIMPLE_FIELDS = new Set([
  'event_id',
  'source_id',
  'alert_name',
  'answer',
  'reason',
  'consecutive_count',
  'escalated',
  'tools',
  'payloads',
  'metadata',
]);

const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

const isId = (value: unknown): value is string => typeof value === 'string' && value.length >= 1 && value.length <= 256;

function isToolList(value: unknown): value is string[] {
  if (!Array.isArray(value) || value.length > 64) return false;
  for (const name of value) if (typeof name !== 'string' || !TOOL_NAME.test(name)) return false;
  return true;
}

/**
 * The validated action request for the common shape of POST /actions/execute — ids, answer YES/NO, reason, count,
 * flag, tool names, no payload data, metadata as an object — with the schema's defaults applied; undefined for
 * anything else, which `actionRequestSchema` then validates (and words the errors of). Used as the route's fast
 * body path: joi costs more than the rest of a log_alert dispatch. fast-action-request.test.ts checks that every
 * value returned here is exactly what the schema returns.
 */
export function fastActionRequest(body: unknown): ReceivedActionRequest | undefined {
  if (!isObject(body)) return undefined;
  for (const key in body) if (!SIMPLE_FIELDS.has(key)) return undefined;
  const { event_id, source_id, alert_name, answer, reason, consecutive_count, escalated, tools, payloads, metadata } =
    body;
  if (!isId(source_id) || !isId(alert_name)) return undefined;
  if (event_id !== undefined && !isId(event_id)) return undefined;
  if (answer !== undefined && answer !== 'YES' && answer !== 'NO') return undefined;
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > 10_000)) return undefined;
  if (
    consecutive_count !== undefined &&
    !(Number.isSafeInteger(consecutive_count) && (consecutive_count as number) >= 1)
  )
    return undefined;
  if (escalated !== undefined && typeof escalated !== 'boolean') return undefined;
  if (tools !== undefined && !isToolList(tools)) return undefined;
  if (payloads !== undefined && !(Array.isArray(payloads) && payloads.length === 0)) return undefined;
  if (metadata !== undefined && !isObject(metadata)) return undefined;

  const request: ReceivedActionRequest = {
    source_id,
    alert_name,
    answer: (answer as ActionRequest['answer'] | undefined) ?? 'YES',
    reason: (reason as string | undefined) ?? '',
    consecutive_count: (consecutive_count as number | undefined) ?? 1,
    escalated: (escalated as boolean | undefined) ?? false,
    payloads: [],
  };
  if (event_id !== undefined) request.event_id = event_id;
  if (tools !== undefined) request.tools = [...tools];
  if (metadata !== undefined) request.metadata = { ...metadata };
  return request;
}
