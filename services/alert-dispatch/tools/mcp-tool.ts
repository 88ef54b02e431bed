import { isObject } from '../../lib/json/index.js';
import { McpCallError, McpServerUnavailableError } from '../mcp/errors.js';
import { ToolError, type DispatchTool } from './tool.js';

/** A disconnected server, a call time-out or a server-side failure may pass; bad arguments will not. */
function classify(err: unknown): ToolError {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof McpServerUnavailableError) return new ToolError(message, true);
  if (err instanceof McpCallError) return new ToolError(message, err.kind !== 'invalid_arguments');
  return new ToolError(message, false);
}

/** A tool discovered on an MCP server (shape of McpManager.tools()). */
export interface McpToolDescriptor {
  name: string;
  server: string;
  tool: string;
  description?: string;
  inputSchema?: unknown;
}

/** The part of the MCP manager the dispatcher needs: listing, invoking and status of MCP tools. */
export interface McpToolSource {
  tools(): McpToolDescriptor[];
  invoke(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<{ content: unknown; isError: boolean }>;
  status(): {
    enabled: boolean;
    servers: Array<{ name: string; connected: boolean; tool_count: number }>;
    total_tools: number;
  };
}

/** Adapts one MCP tool to a dispatch tool: it succeeds when the server answers with `isError` false. */
export function mcpDispatchTool(source: McpToolSource, descriptor: McpToolDescriptor): DispatchTool {
  return {
    name: descriptor.name,
    description: descriptor.description ?? `MCP tool ${descriptor.tool} on ${descriptor.server}`,
    requiresEnv: [],
    source: 'mcp',
    parameters: isObject(descriptor.inputSchema) ? descriptor.inputSchema : { type: 'object', properties: {} },
    enabled: () => true,
    runnable: () => true,
    async run({ args, signal }) {
      let result: { content: unknown; isError: boolean };
      try {
        result = await source.invoke(descriptor.name, args, signal);
      } catch (err) {
        if (signal.aborted) throw err;
        throw classify(err);
      }
      if (result.isError) throw new ToolError(`MCP tool ${descriptor.name} reported an error`, false);
      return { content: result.content };
    },
  };
}
