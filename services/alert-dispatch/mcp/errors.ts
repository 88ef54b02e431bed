/** The MCP configuration file is missing, unreadable or invalid; `problems` lists every issue found. */
export class McpConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid MCP configuration ${file}: ${problems.join('; ')}`);
    this.name = 'McpConfigError';
  }
}

/** No connected MCP server offers a tool of this (qualified) name. */
export class McpToolNotFoundError extends Error {
  constructor(readonly toolName: string) {
    super(`Unknown MCP tool: ${toolName}`);
    this.name = 'McpToolNotFoundError';
  }
}

/** The tool's server is configured but not connected right now (it is being reconnected). */
export class McpServerUnavailableError extends Error {
  constructor(readonly server: string) {
    super(`MCP server ${server} is not connected`);
    this.name = 'McpServerUnavailableError';
  }
}

/** A tool call failed at the protocol level; `kind` says how, so HTTP can pick 400, 502 or 504. */
export class McpCallError extends Error {
  constructor(
    readonly kind: 'invalid_arguments' | 'timeout' | 'server_error',
    message: string,
  ) {
    super(message);
    this.name = 'McpCallError';
  }
}
