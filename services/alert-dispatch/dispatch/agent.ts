import type { Logger } from '../../lib/log/index.js';
import type { DispatchTool } from '../tools/tool.js';
import { alertSummary } from '../tools/tool.js';
import type { ActionRequest } from './types.js';

/** Where and how to reach an OpenAI-compatible chat completions endpoint. */
export interface AgentOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
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

/** The reason the model call's own time-out aborts it with. */
class AgentTimeout extends Error {}

/** Why a signal was aborted, as text. */
function reasonText(signal: AbortSignal): string {
  return signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? 'aborted');
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
  constructor(private readonly options: AgentOptions) {}

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
    const body = {
      model: this.options.model,
      temperature: 0,
      tool_choice: 'auto',
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: JSON.stringify({ alert: alertSummary(request, snapshotPath) }) },
      ],
      tools: offered.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      })),
    };
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    if (signal?.aborted) throw new AgentUnavailable(`language model call not made: ${reasonText(signal)}`);
    // One controller for the time-out and the shutdown, its listener removed after the call: the shutdown signal
    // lives as long as the process.
    const call = new AbortController();
    const timer = setTimeout(() => call.abort(new AgentTimeout()), this.options.timeoutMs);
    const onShutdown = () => call.abort(signal!.reason);
    signal?.addEventListener('abort', onShutdown, { once: true });
    let answer: any;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal: call.signal,
      });
      if (!res.ok) {
        await res.body?.cancel();
        throw new AgentUnavailable(`language model answered HTTP ${res.status}`);
      }
      answer = await res.json();
    } catch (err) {
      if (err instanceof AgentUnavailable) throw err;
      if (call.signal.reason instanceof AgentTimeout) {
        throw new AgentUnavailable(`language model timed out after ${this.options.timeoutMs} ms`);
      }
      if (signal?.aborted) throw new AgentUnavailable(`language model call aborted: ${reasonText(signal)}`);
      throw new AgentUnavailable(`language model unreachable or answer unreadable: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onShutdown);
    }
    return this.parse(answer, new Set(offered.map((t) => t.name)));
  }

  private parse(answer: any, allowed: Set<string>): ChosenTool[] {
    const calls = answer?.choices?.[0]?.message?.tool_calls;
    if (!Array.isArray(calls)) throw new AgentUnavailable('answer has no tool_calls');
    const chosen = new Map<string, ChosenTool>();
    for (const call of calls) {
      const name = call?.function?.name;
      if (typeof name !== 'string' || !allowed.has(name)) {
        this.options.logger.warn('agent chose a tool it was not offered', { tool: String(name) });
        continue;
      }
      let args: Record<string, unknown> = {};
      const raw = call.function.arguments;
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
