import type { Logger } from '../../lib/log/index.js';
import type { ActionRequest } from '../dispatch/types.js';

/** Everything a tool sees when it runs for one alert. */
export interface ToolContext {
  request: ActionRequest;
  /** This tool's entry of the merged `tool_arguments` (empty object when none). */
  args: Record<string, unknown>;
  /** Path written by `capture_snapshot` earlier in the same dispatch, if any. */
  snapshotPath: string | null;
  /** Aborted when the attempt times out or the service shuts down. */
  signal: AbortSignal;
  logger: Logger;
}

/** A tool's result: free-form details, plus `snapshot_path` for the snapshot tool. */
export type ToolOutput = Record<string, unknown>;

/** Description of a tool as listed by GET /api/v1/tools. */
export interface ToolInfo {
  name: string;
  enabled: boolean;
  description: string;
  requires_env: string[];
  source: 'builtin' | 'mcp';
  server?: string;
}

/** One action tool, built-in or adapted from an MCP server. */
export interface DispatchTool {
  readonly name: string;
  readonly description: string;
  readonly requiresEnv: string[];
  readonly source: 'builtin' | 'mcp';
  /** JSON schema of the arguments offered to the language model in agent mode. */
  readonly parameters: Record<string, unknown>;
  /** Whether the service configuration enables the tool (what GET /tools shows). */
  enabled(): boolean;
  /** Whether the tool can run with these arguments (a per-request webhook URL runs a tool that is not enabled). */
  runnable(args: Record<string, unknown>): boolean;
  run(ctx: ToolContext): Promise<ToolOutput>;
}

/** A tool failure; `retryable` failures are retried with back-off, honouring `retryAfterMs` when the peer set it. */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/** A tool that refuses to act on its arguments (a webhook URL the policy refuses): never retried, nothing sent. */
export class ToolRefusal extends ToolError {
  constructor(message: string) {
    super(message, false);
    this.name = 'ToolRefusal';
  }
}

/** The alert fields tools send to the outside (webhook body, MQTT message): never the payload bytes. */
export function alertSummary(request: ActionRequest, snapshotPath: string | null): Record<string, unknown> {
  return {
    event_id: request.event_id,
    source_id: request.source_id,
    alert_name: request.alert_name,
    answer: request.answer,
    reason: request.reason,
    consecutive_count: request.consecutive_count,
    escalated: request.escalated,
    snapshot_path: snapshotPath,
    payload_kinds: request.payloads.map((p) => p.kind),
    metadata: request.metadata ?? {},
    timestamp: request.timestamp,
  };
}

/** Empty JSON schema for built-in tools: the language model never sets their arguments (they are operator config). */
export const NO_PARAMETERS = { type: 'object', properties: {}, additionalProperties: false };
