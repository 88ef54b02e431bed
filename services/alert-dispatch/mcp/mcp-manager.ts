import { KeyedQueue } from '../../lib/keyed-queue/index.js';
import type { Logger } from '../../lib/log/index.js';
import { loadMcpConfig, type McpConfig } from './config.js';
import { McpToolNotFoundError } from './errors.js';
import { McpServerConnection, type McpCallResult, type ReconnectPolicy } from './server-connection.js';
import { qualifiedToolName } from './tool-names.js';

/** Options of the McpManager; without `configFile` MCP is disabled. */
export interface McpManagerOptions {
  configFile?: string;
  logger: Logger;
  reconnect?: ReconnectPolicy;
  /** Variables for `${NAME}` in the configuration file (pass the service's env); without it no substitution. */
  environment?: Record<string, string | undefined>;
  /** Ping interval of streamable-HTTP servers, to notice one that went away between calls (default 30 s). */
  healthCheckMs?: number;
}

/** State of one configured server. `last_error` is the latest connection or transport failure, if any. */
export interface McpServerStatus {
  name: string;
  connected: boolean;
  tool_count: number;
  transport: 'stdio' | 'http';
  last_error?: string;
}

/** Connection status of configured MCP servers (contract shape plus per-server `transport`/`last_error`). */
export interface McpStatus {
  enabled: boolean;
  servers: McpServerStatus[];
  total_tools: number;
}

/** A tool discovered on an MCP server, under its registry name `<server>__<tool>`. */
export interface McpToolInfo {
  name: string;
  server: string;
  tool: string;
  description: string;
  inputSchema: unknown;
}

interface RegistryEntry {
  info: McpToolInfo;
  connection: McpServerConnection;
}

const DEFAULT_RECONNECT: ReconnectPolicy = { initialMs: 1000, maxMs: 30_000 };

/** The one key of the manager's queue: start, reload and close all touch the same connections. */
const CONNECTIONS = 'connections';

/**
 * Connects to the MCP servers named in a configuration file and exposes their tools under unambiguous names.
 * Servers that fail or die are reported disconnected and reconnected with back-off; a bad file on reload keeps
 * the running configuration.
 */
export class McpManager {
  private readonly logger: Logger;
  private readonly reconnect: ReconnectPolicy;
  private connections: McpServerConnection[] = [];
  private registry = new Map<string, RegistryEntry>();
  /** Start, reload and close run one at a time so that two reloads never interleave their connections. */
  private readonly queue = new KeyedQueue<string>();
  private closing: Promise<void> | undefined;

  constructor(private readonly opts: McpManagerOptions) {
    this.logger = opts.logger;
    this.reconnect = opts.reconnect ?? DEFAULT_RECONNECT;
  }

  /** Loads the configuration and connects every enabled server; throws McpConfigError for a bad file. */
  start(): Promise<void> {
    return this.queue.run(CONNECTIONS, async () => {
      if (!this.opts.configFile) return;
      await this.apply(await loadMcpConfig(this.opts.configFile, this.opts.environment));
    });
  }

  /** Re-reads the configuration and reconnects everything; on McpConfigError the running servers are kept. */
  reload(): Promise<McpStatus> {
    return this.queue.run(CONNECTIONS, async () => {
      if (this.opts.configFile) {
        const config = await loadMcpConfig(this.opts.configFile, this.opts.environment).catch((err) => {
          this.logger.error('MCP configuration rejected, keeping the running one', { error: (err as Error).message });
          throw err;
        });
        await this.apply(config);
      }
      return this.status();
    });
  }

  /** Connection state of each configured server. */
  status(): McpStatus {
    const servers = this.connections.map((c) => {
      const s: McpServerStatus = {
        name: c.name,
        connected: c.connected,
        tool_count: c.tools.length,
        transport: c.transportKind,
      };
      if (c.lastError) s.last_error = c.lastError;
      return s;
    });
    const total = servers.reduce((sum, s) => sum + s.tool_count, 0);
    return { enabled: this.connections.length > 0, servers, total_tools: total };
  }

  /** Tools of the connected servers, in configuration order. */
  tools(): McpToolInfo[] {
    return [...this.registry.values()].filter((e) => e.connection.connected).map((e) => e.info);
  }

  /** Whether `name` is a known MCP tool (its server may be reconnecting: invoke() then throws McpServerUnavailableError). */
  has(name: string): boolean {
    return this.registry.has(name);
  }

  /**
   * Calls a tool by registry name. Throws McpToolNotFoundError, McpServerUnavailableError or McpCallError; a tool
   * that ran and failed resolves with `isError: true`.
   */
  async invoke(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    const entry = this.registry.get(name);
    if (!entry) throw new McpToolNotFoundError(name);
    return entry.connection.call(entry.info.tool, args, signal);
  }

  /** Process id of a connected stdio server, for diagnostics and tests. */
  serverPid(server: string): number | null {
    return this.connections.find((c) => c.name === server)?.pid ?? null;
  }

  /** Disconnects every server and stops reconnecting; a start or reload asked for afterwards is refused. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      await this.queue.run(CONNECTIONS, async () => {
        await Promise.all(this.connections.map((c) => c.close()));
        this.connections = [];
        this.rebuildRegistry();
      });
      await this.queue.close();
    })());
  }

  private async apply(config: McpConfig): Promise<void> {
    if (this.closing) return;
    const old = this.connections;
    this.connections = [];
    await Promise.all(old.map((c) => c.close()));
    this.connections = config.servers
      .filter((s) => s.enabled)
      .map(
        (s) =>
          new McpServerConnection(
            s,
            this.logger,
            this.reconnect,
            () => this.rebuildRegistry(),
            this.opts.healthCheckMs,
          ),
      );
    this.rebuildRegistry();
    await Promise.all(this.connections.map((c) => c.connect()));
  }

  private rebuildRegistry(): void {
    const registry = new Map<string, RegistryEntry>();
    for (const connection of this.connections) {
      for (const tool of connection.knownTools) {
        const name = qualifiedToolName(connection.name, tool.name);
        if (registry.has(name)) {
          this.logger.warn('MCP tool name collides after sanitising; tool skipped', {
            server: connection.name,
            tool: tool.name,
            name,
          });
          continue;
        }
        registry.set(name, {
          connection,
          info: {
            name,
            server: connection.name,
            tool: tool.name,
            description: tool.description ?? tool.title ?? '',
            inputSchema: tool.inputSchema,
          },
        });
      }
    }
    this.registry = registry;
  }
}
