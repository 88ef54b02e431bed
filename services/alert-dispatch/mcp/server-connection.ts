import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../lib/log/index.js';
import { isStdioServer, type McpServerConfig } from './config.js';
import { McpCallError, McpServerUnavailableError } from './errors.js';

/** Exponential back-off of reconnection attempts: initialMs, doubled per failure, capped at maxMs. */
export interface ReconnectPolicy {
  initialMs: number;
  maxMs: number;
}

/** Delay before reconnection attempt `attempt` (0-based): initialMs doubled per earlier failure, capped at maxMs. */
export function reconnectDelay(policy: ReconnectPolicy, attempt: number): number {
  return Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt, 30));
}

/** What a tool call returns: MCP content blocks and whether the tool reported an error. */
export interface McpCallResult {
  content: unknown;
  isError: boolean;
  structuredContent?: unknown;
}

const CLIENT_INFO = { name: 'argus-alert-dispatch', version: '1.0.0' };
const CONNECT_TIMEOUT_MS = 15_000;
const MAX_TOOL_PAGES = 50;
const MAX_STDERR_LINE = 500;

/**
 * One configured MCP server: connects, lists its tools, and when the connection drops reconnects with
 * exponential back-off until closed. Every client gets its own generation so late events of an old one are ignored.
 */
export class McpServerConnection {
  /** Tools from the latest listing; kept while disconnected so that calls to them answer "unavailable", not "unknown". */
  knownTools: Tool[] = [];
  lastError?: string;
  private client?: Client;
  private transport?: Transport;
  private attempt = 0;
  private retryTimer?: NodeJS.Timeout;
  private healthTimer?: NodeJS.Timeout;
  private connecting?: Promise<void>;
  private closed = false;

  constructor(
    readonly config: McpServerConfig,
    private readonly logger: Logger,
    private readonly reconnect: ReconnectPolicy,
    private readonly onToolsChanged: () => void,
    /** Ping interval of HTTP servers, whose death nothing else reveals between calls (stdio: the child exits). */
    private readonly healthCheckMs = 30_000,
  ) {}

  /** The server's name from the configuration. */
  get name(): string {
    return this.config.name;
  }

  /** Tools callable now: none while disconnected. */
  get tools(): Tool[] {
    return this.client ? this.knownTools : [];
  }

  /** True while a client is initialised and its transport open. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /** `stdio` or `http`. */
  get transportKind(): 'stdio' | 'http' {
    return isStdioServer(this.config) ? 'stdio' : 'http';
  }

  /** Process id of a stdio server's child, for diagnostics. */
  get pid(): number | null {
    return this.transport instanceof StdioClientTransport ? this.transport.pid : null;
  }

  /** One connection attempt (joined if one is under way); on failure the next is scheduled, never thrown. */
  connect(): Promise<void> {
    if (this.closed || this.client) return Promise.resolve();
    this.connecting ??= this.attemptConnect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  /** Calls a tool of this server by its own (unqualified) name. */
  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    const client = this.client;
    if (!client) throw new McpServerUnavailableError(this.name);
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: this.config.timeout_ms,
      });
      const out: McpCallResult = {
        content: result.content ?? ('toolResult' in result ? [result.toolResult] : []),
        isError: result.isError === true,
      };
      if (result.structuredContent !== undefined) out.structuredContent = result.structuredContent;
      return out;
    } catch (err) {
      if (signal?.aborted) throw err;
      if (err instanceof McpError) {
        if (err.code === ErrorCode.InvalidParams) throw new McpCallError('invalid_arguments', err.message);
        if (err.code === ErrorCode.RequestTimeout) throw new McpCallError('timeout', err.message);
        if (err.code !== ErrorCode.ConnectionClosed) throw new McpCallError('server_error', err.message);
      }
      // The transport failed under the call (an HTTP server went away): treat the server as disconnected.
      this.lastError = (err as Error).message;
      if (this.client === client) this.lost(client);
      throw new McpServerUnavailableError(this.name);
    }
  }

  /** Stops reconnecting and closes the client (a stdio child gets SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.healthTimer);
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    this.knownTools = [];
    await client?.close().catch(() => undefined);
  }

  private async attemptConnect(): Promise<void> {
    const transport = this.createTransport();
    const client = new Client(CLIENT_INFO, {
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (this.client !== client) return;
            if (error) this.logger.warn('MCP tool list refresh failed', { server: this.name, error: error.message });
            else if (tools) this.setTools(tools);
          },
        },
      },
    });
    client.onerror = (err) => this.logger.debug('MCP client error', { server: this.name, error: err.message });
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
      const tools = await this.listAllTools(client);
      if (this.closed) {
        await client.close().catch(() => undefined);
        return;
      }
      client.onclose = () => this.lost(client);
      this.client = client;
      this.transport = transport;
      this.attempt = 0;
      this.lastError = undefined;
      if (!isStdioServer(this.config)) this.watchHealth(client);
      this.logger.info('MCP server connected', { server: this.name, tools: tools.length, pid: this.pid ?? undefined });
      this.setTools(tools);
    } catch (err) {
      this.lastError = (err as Error).message;
      await client.close().catch(() => undefined);
      this.logger.warn('MCP server connection failed', { server: this.name, error: this.lastError });
      this.scheduleReconnect();
    }
  }

  private createTransport(): Transport {
    const config = this.config;
    if (!isStdioServer(config)) {
      return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    }
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      env: config.env,
      cwd: config.cwd,
      stderr: 'pipe',
    });
    // The child's stderr must be drained or it blocks; its lines are debug diagnostics.
    transport.stderr?.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim())
          this.logger.debug('MCP server stderr', { server: this.name, line: line.slice(0, MAX_STDERR_LINE) });
      }
    });
    return transport;
  }

  private async listAllTools(client: Client): Promise<Tool[]> {
    if (!client.getServerCapabilities()?.tools) return [];
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: CONNECT_TIMEOUT_MS });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  private setTools(tools: Tool[]): void {
    this.knownTools = tools;
    this.onToolsChanged();
  }

  private watchHealth(client: Client): void {
    clearInterval(this.healthTimer);
    this.healthTimer = setInterval(() => {
      if (this.client !== client) return clearInterval(this.healthTimer);
      client.ping({ timeout: Math.min(this.healthCheckMs, 10_000) }).catch((err: Error) => {
        this.lastError = `ping failed: ${err.message}`;
        this.lost(client);
      });
    }, this.healthCheckMs);
    this.healthTimer.unref();
  }

  private lost(client: Client): void {
    if (this.client !== client) return;
    clearInterval(this.healthTimer);
    this.client = undefined;
    this.transport = undefined;
    this.onToolsChanged();
    client.close().catch(() => undefined);
    if (this.closed) return;
    this.logger.warn('MCP server disconnected', { server: this.name, error: this.lastError });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    const delay = reconnectDelay(this.reconnect, this.attempt);
    this.attempt++;
    this.logger.info('MCP server reconnect scheduled', { server: this.name, delay_ms: delay });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }
}
