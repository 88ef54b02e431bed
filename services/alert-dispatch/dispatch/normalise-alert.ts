import { randomUUID } from 'node:crypto';
import type { ActionRequest, FlexibleAlert } from './types.js';

/** Fields of the flexible alert that map onto the action request; everything else lands in metadata. */
const RECOGNISED = new Set([
  'alert_type',
  'source_id',
  'alert_name',
  'answer',
  'reason',
  'metadata',
  'timestamp',
  'tools',
  'payloads',
  'event_id',
  'consecutive_count',
  'escalated',
  'tool_arguments',
  'escalation',
  'dedup',
]);

/**
 * Maps a validated flexible alert (defaults already applied) onto an action request: alert_name defaults to
 * alert_type, `tools` stays unset when absent so the subscription's defaults still apply, and unrecognised top-level
 * fields are kept in `metadata` (explicit metadata keys win) so that dedup fields can reach them.
 */
export function normaliseFlexibleAlert(alert: FlexibleAlert, now: () => string): ActionRequest {
  const extra = Object.fromEntries(Object.entries(alert).filter(([key]) => !RECOGNISED.has(key)));
  return {
    event_id: alert.event_id ?? randomUUID(),
    source_id: alert.source_id,
    alert_name: alert.alert_name ?? alert.alert_type,
    answer: alert.answer,
    reason: alert.reason,
    consecutive_count: alert.consecutive_count ?? 1,
    escalated: alert.escalated ?? false,
    tools: alert.tools,
    tool_arguments: alert.tool_arguments,
    escalation: alert.escalation,
    payloads: alert.payloads,
    dedup: alert.dedup,
    metadata: { alert_type: alert.alert_type, ...extra, ...alert.metadata },
    timestamp: alert.timestamp ?? now(),
  };
}
