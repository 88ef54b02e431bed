/** Kinds of multimodal payloads an alert may carry. */
export const PAYLOAD_KINDS = ['text', 'image', 'audio', 'video', 'binary'] as const;
/** How a payload's bytes are carried. */
export const PAYLOAD_ENCODINGS = ['base64', 'uri', 'raw'] as const;

/** One multimodal payload of an alert. */
export interface Payload {
  kind: (typeof PAYLOAD_KINDS)[number];
  mime_type?: string;
  encoding: (typeof PAYLOAD_ENCODINGS)[number];
  data_base64?: string;
  uri?: string;
  data_text?: string;
  metadata?: Record<string, unknown>;
}

/** Duplicate suppression settings of a request or a subscription entry. */
export interface DedupSpec {
  enabled: boolean;
  strategy: 'field_hash';
  fields: string[];
  window_seconds: number;
  on_missing: 'skip' | 'hash_missing';
}

/** Escalation settings: extra tools once an alert repeats often enough. */
export interface EscalationSpec {
  threshold_consecutive?: number | null;
  additional_tools: string[];
  /** When set, the service counts consecutive YES alerts per alert_name and source_id itself, for this window. */
  count_window_seconds?: number;
}

/** Per-tool argument objects, keyed by tool name. */
export type ToolArguments = Record<string, Record<string, unknown>>;

/** A validated action request: the single input of the dispatch pipeline. */
export interface ActionRequest {
  event_id: string;
  source_id: string;
  alert_name: string;
  answer: 'YES' | 'NO';
  reason: string;
  consecutive_count: number;
  escalated: boolean;
  tools?: string[];
  tool_arguments?: ToolArguments;
  escalation?: EscalationSpec;
  payloads: Payload[];
  dedup?: DedupSpec;
  /** Not in the action request contract; carried over from flexible alerts so dedup fields can reach it. */
  metadata?: Record<string, unknown>;
  /** When the alert happened (ISO-8601); defaults to the time of receipt. */
  timestamp?: string;
}

/** An action request as validated, before the route fills in its `event_id` and `timestamp`. */
export type ReceivedActionRequest = Omit<ActionRequest, 'event_id'> & { event_id?: string };

/** The fields of a validated flexible alert (defaults applied) that map onto an action request. */
export interface FlexibleAlertFields {
  alert_type: string;
  source_id: string;
  alert_name?: string;
  answer: 'YES' | 'NO';
  reason: string;
  metadata: Record<string, unknown>;
  timestamp?: string;
  tools?: string[];
  payloads: Payload[];
  event_id?: string;
  consecutive_count?: number;
  escalated?: boolean;
  tool_arguments?: ToolArguments;
  escalation?: EscalationSpec;
  dedup?: DedupSpec;
}

/** A validated flexible alert: the recognised fields typed, any other field as sent. */
export type FlexibleAlert = FlexibleAlertFields & Record<string, unknown>;

/** Why a dispatch ran no tool at all. */
export type Suppression = 'answer_no' | 'duplicate';

/** Outcome of one tool run inside a dispatch. */
export interface ToolRunResult {
  name: string;
  success: boolean;
  attempts: number;
  duration_ms: number;
  error?: string;
  /** The tool refused to act (a webhook URL outside WEBHOOK_URL_ALLOW): nothing was sent anywhere. */
  refused?: boolean;
  output?: Record<string, unknown>;
}

/**
 * What became of one requested tool: it succeeded, failed (reason: its error), was unavailable (reason: unknown or
 * disabled) or was skipped (reason: answer NO, a duplicate, or the agent did not choose it).
 */
export interface ToolOutcome {
  name: string;
  outcome: 'succeeded' | 'failed' | 'unavailable' | 'skipped';
  reason?: string;
}

/** What a dispatch returns: the contract's action response plus diagnostic fields. */
export interface DispatchResult {
  event_id: string;
  source_id: string;
  alert_name: string;
  actions_taken: string[];
  snapshot_path: string | null;
  duration_ms: number;
  timestamp: string;
  suppressed: Suppression | null;
  /** `agent` when the language model chose the tools, `rules` otherwise. */
  mode: 'agent' | 'rules' | 'none';
  tools_requested: string[];
  failed_tools: Array<{ name: string; error: string }>;
  /** One entry per `tools_requested`, same order: no requested tool goes unaccounted for. */
  tool_outcomes: ToolOutcome[];
}
