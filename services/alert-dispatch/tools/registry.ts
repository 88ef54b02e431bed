import type { DispatchTool, ToolInfo } from './tool.js';
import { mcpDispatchTool, type McpToolSource } from './mcp-tool.js';

/**
 * All tools a dispatch may run: the built-ins first, then the tools the MCP manager currently knows (asked on
 * every lookup, so an MCP reload is visible at once). A built-in name always wins over an MCP one.
 */
export class ToolRegistry {
  private readonly builtins = new Map<string, DispatchTool>();

  constructor(
    builtins: DispatchTool[],
    private readonly mcp?: McpToolSource,
  ) {
    for (const tool of builtins) this.builtins.set(tool.name, tool);
  }

  /** A built-in tool by name. */
  builtin(name: string): DispatchTool | undefined {
    return this.builtins.get(name);
  }

  /** A built-in or MCP tool by name. */
  get(name: string): DispatchTool | undefined {
    const builtin = this.builtins.get(name);
    if (builtin) return builtin;
    const descriptor = this.mcp?.tools().find((t) => t.name === name);
    return descriptor && this.mcp ? mcpDispatchTool(this.mcp, descriptor) : undefined;
  }

  /** Every tool, as listed by GET /api/v1/tools. */
  list(): ToolInfo[] {
    const builtins: ToolInfo[] = [...this.builtins.values()].map((t) => ({
      name: t.name,
      enabled: t.enabled(),
      description: t.description,
      requires_env: t.requiresEnv,
      source: 'builtin',
    }));
    const mcp: ToolInfo[] = (this.mcp?.tools() ?? [])
      .filter((t) => !this.builtins.has(t.name))
      .map((t) => ({
        name: t.name,
        enabled: true,
        description: t.description ?? '',
        requires_env: [],
        source: 'mcp',
        server: t.server,
      }));
    return [...builtins, ...mcp];
  }
}
