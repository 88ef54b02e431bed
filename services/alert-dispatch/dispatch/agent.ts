import { ChatCompletionsClient, LlmError, type ChatAnswer, type LlmConfig } from '../../lib/llm/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { DispatchTool } from '../tools/tool.js';
import { alertSummary } from '../tools/tool.js';
import type { ActionRequest } from './types.js';

/** Where and how to reach the OpenAI-compatible chat-completions endpoint, and where the agent logs. */
export interface AgentOptions extends LlmConfig {
  logger: Logger;
}

/** A tool the model chose, with the arguments it gave (JSON-parsed). */
export interface ChosenTool {
  name: string;
  arguments: Record<string, unknown>;
}

/** Why the agent produced no decision; the dispatcher then falls back to the rules. */
export class AgentUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentUnavailable';
  }
}

const SYSTEM_PROMPT =
  'You are the action dispatcher of a video-analytics alerting system. Given an alert, call the functions that ' +
  'should handle it. Call each function at most once. Only the functions offered may be called. When unsure, ' +
  'call every offered function.';

/** Function names must match OpenAI's pattern; MCP names like `server__tool` already do. */
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Chooses tools with a language model through OpenAI-style function calling (one function per candidate tool).
 * Every failure — time-out, HTTP error, an answer without usable tool calls — throws AgentUnavailable.
 */
export class ToolAgent {
  private readonly client: ChatCompletionsClient;

  constructor(private readonly options: AgentOptions) {
    this.client = new ChatCompletionsClient(options);
  }

  /**
   * Asks the model which of `candidates` to run for `request`; returns at least one tool or throws. `signal` (the
   * service's shutdown) ends the call early, like its time-out.
   */
  async choose(
    request: ActionRequest,
    candidates: DispatchTool[],
    snapshotPath: string | null,
    signal?: AbortSignal,
  ): Promise<ChosenTool[]> {
    const offered = candidates.filter((t) => FUNCTION_NAME.test(t.name));
    if (offered.length === 0) throw new AgentUnavailable('no tool can be offered to the model');
    let answer: ChatAnswer;
    try {
      answer = await this.client.answer(
        {
          temperature: 0,
          messages: [
            { role: 'system', content: SYSTEM_PROMPT },
            { role: 'user', content: JSON.stringify({ alert: alertSummary(request, snapshotPath) }) },
          ],
          tools: offered.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
        },
        signal,
      );
    } catch (err) {
      throw new AgentUnavailable(`language model call failed: ${err instanceof LlmError ? err.message : String(err)}`);
    }
    return this.parse(answer, new Set(offered.map((t) => t.name)));
  }

  private parse(answer: ChatAnswer, allowed: Set<string>): ChosenTool[] {
    if (!answer.toolCalls) throw new AgentUnavailable('answer has no tool_calls');
    const chosen = new Map<string, ChosenTool>();
    for (const { name, arguments: raw } of answer.toolCalls) {
      if (!allowed.has(name)) {
        this.options.logger.warn('agent chose a tool it was not offered', { tool: name });
        continue;
      }
      let args: Record<string, unknown> = {};
      if (typeof raw === 'string' && raw.trim()) {
        try {
          const parsed = JSON.parse(raw);
          if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed;
        } catch {
          this.options.logger.warn('agent gave unparseable tool arguments', { tool: name });
        }
      } else if (raw && typeof raw === 'object') {
        args = raw as Record<string, unknown>;
      }
      if (!chosen.has(name)) chosen.set(name, { name, arguments: args });
    }
    if (chosen.size === 0) throw new AgentUnavailable('answer names no usable tool');
    return [...chosen.values()];
  }
}
