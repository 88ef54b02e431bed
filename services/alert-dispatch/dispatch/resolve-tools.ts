import type { ActionRequest, DedupSpec, EscalationSpec, ToolArguments } from './types.js';

/** The subscription settings that matter to one dispatch (see subscriptions/). */
export interface SubscriptionDefaults {
  tools: string[];
  tool_arguments: ToolArguments;
  dedup?: DedupSpec;
  escalation?: EscalationSpec;
}

/** The tool list used when neither the request nor a subscription names one. */
export const FALLBACK_TOOLS = ['log_alert'];

/** True when the request counts as escalated: flagged by the caller or past the consecutive-count threshold. */
export function isEscalated(request: ActionRequest, escalation: EscalationSpec | undefined): boolean {
  if (request.escalated) return true;
  const threshold = escalation?.threshold_consecutive;
  return typeof threshold === 'number' && request.consecutive_count >= threshold;
}

/** Settings a dispatch runs with once request and subscription are merged (the request wins field by field). */
export interface ResolvedPlan {
  tools: string[];
  toolArguments: ToolArguments;
  dedup?: DedupSpec;
  escalation?: EscalationSpec;
  escalated: boolean;
}

/**
 * Resolves the tools of a request: its own `tools`, else the subscription's defaults, else [`log_alert`]; an empty
 * list counts as absent. Escalation (the request's, else the subscription's) appends its `additional_tools`.
 * Names are de-duplicated, order kept.
 */
export function resolvePlan(request: ActionRequest, subscription: SubscriptionDefaults | undefined): ResolvedPlan {
  const base = request.tools?.length ? request.tools : subscription?.tools.length ? subscription.tools : FALLBACK_TOOLS;
  const escalation = request.escalation ?? subscription?.escalation;
  const escalated = isEscalated(request, escalation);
  const extra = escalated ? (escalation?.additional_tools ?? []) : [];
  // A single tool (the common case) needs no de-duplication.
  const tools = base.length === 1 && extra.length === 0 ? base : [...new Set([...base, ...extra])];
  // Request arguments override the subscription's per tool, not per field: a request names a whole argument object.
  const toolArguments = { ...subscription?.tool_arguments, ...request.tool_arguments };
  return { tools, toolArguments, dedup: request.dedup ?? subscription?.dedup, escalation, escalated };
}
