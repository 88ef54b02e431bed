import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Joi from 'joi';
import YAML from 'yaml';
import { McpConfigError } from './errors.js';

/** An MCP server started as a child process speaking over stdio. */
export interface StdioServerConfig {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Working directory of the child; defaults to the configuration file's directory. */
  cwd: string;
  enabled: boolean;
  timeout_ms: number;
}

/** An MCP server reached over streamable HTTP. */
export interface HttpServerConfig {
  name: string;
  url: string;
  headers: Record<string, string>;
  enabled: boolean;
  timeout_ms: number;
}

/** One configured MCP server. */
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** The validated MCP configuration file. */
export interface McpConfig {
  servers: McpServerConfig[];
}

/** Server names become tool-name prefixes, so they are restricted to what LLM function names accept. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** One server entry as validated: stdio (`command`) or HTTP (`url`), exactly one of them (`xor` below). */
interface ServerEntry {
  name: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  enabled: boolean;
  timeout_ms: number;
}

const serverSchema = Joi.object<ServerEntry, true>({
  name: Joi.string().pattern(SERVER_NAME_PATTERN).required().messages({
    'string.pattern.base': '{#label} must be 1-32 letters, digits, _ or - (starting with a letter or digit)',
  }),
  command: Joi.string().min(1),
  // No defaults here: joi applies them before the peer checks below, which would then always conflict.
  args: Joi.array().items(Joi.string()),
  env: Joi.object().pattern(Joi.string(), Joi.string()),
  cwd: Joi.string().min(1),
  url: Joi.string().uri({ scheme: ['http', 'https'] }),
  headers: Joi.object().pattern(Joi.string(), Joi.string()),
  enabled: Joi.boolean().default(true),
  timeout_ms: Joi.number().integer().min(100).max(600_000).default(60_000),
})
  .xor('command', 'url')
  .oxor('url', 'args')
  .oxor('url', 'env')
  .oxor('url', 'cwd')
  .oxor('command', 'headers');

const configSchema = Joi.object<{ servers: ServerEntry[] }, true>({
  servers: Joi.array().items(serverSchema).unique('name').default([]),
});

/**
 * The common `mcpServers: {name: {command, args, env} | {url}}` layout (Claude Desktop, Cursor) is accepted too and
 * read as `servers: [{name, ...}]`.
 */
function normaliseLayout(raw: unknown): unknown {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw) || !('mcpServers' in raw)) return raw;
  const { mcpServers, ...rest } = raw as { mcpServers: unknown };
  if (!mcpServers || typeof mcpServers !== 'object' || Array.isArray(mcpServers)) return raw;
  const servers = Object.entries(mcpServers as Record<string, object>).map(([name, spec]) => ({ name, ...spec }));
  return { ...rest, servers: [...(((rest as { servers?: unknown[] }).servers as unknown[]) ?? []), ...servers] };
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Replaces `${NAME}` in every string of the parsed file, so that secrets (tokens in headers or env) stay out of it. */
function substitute(value: unknown, environment: Record<string, string | undefined>, missing: Set<string>): unknown {
  if (typeof value === 'string') {
    return value.replace(VARIABLE, (whole, name: string) => {
      const replacement = environment[name];
      if (replacement === undefined) missing.add(name);
      return replacement ?? whole;
    });
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, environment, missing));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, environment, missing)]));
  }
  return value;
}

/**
 * Reads a JSON or YAML MCP configuration file; throws McpConfigError naming every problem. With `environment`,
 * `${NAME}` in any string is replaced by that variable (an unset one is a problem); without it strings stay as written.
 */
export async function loadMcpConfig(
  file: string,
  environment?: Record<string, string | undefined>,
): Promise<McpConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new McpConfigError(file, [`cannot read file (${(err as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  let raw: unknown;
  try {
    // YAML is a superset of JSON, so one parser reads both.
    raw = text.trim() === '' ? {} : YAML.parse(text);
  } catch (err) {
    throw new McpConfigError(file, [`not valid JSON or YAML: ${(err as Error).message.split('\n')[0]}`]);
  }
  if (environment) {
    const missing = new Set<string>();
    raw = substitute(raw, environment, missing);
    if (missing.size > 0) {
      throw new McpConfigError(
        file,
        [...missing].map((name) => `environment variable ${name} is not set`),
      );
    }
  }
  const result = configSchema.validate(normaliseLayout(raw ?? {}), {
    abortEarly: false,
    convert: true,
    errors: { wrap: { label: false } },
  });
  if (result.error)
    throw new McpConfigError(
      file,
      result.error.details.map((d) => d.message),
    );
  const baseDir = path.dirname(path.resolve(file));
  const servers = result.value.servers.map((s): McpServerConfig => {
    if (s.url)
      return { name: s.name, url: s.url, headers: s.headers ?? {}, enabled: s.enabled, timeout_ms: s.timeout_ms };
    return {
      name: s.name,
      // xor('command', 'url'): an entry without a url has a command.
      command: s.command!,
      args: s.args ?? [],
      env: s.env ?? {},
      cwd: path.resolve(baseDir, s.cwd ?? '.'),
      enabled: s.enabled,
      timeout_ms: s.timeout_ms,
    };
  });
  return { servers };
}

/** Narrows a server configuration to the stdio kind. */
export function isStdioServer(server: McpServerConfig): server is StdioServerConfig {
  return 'command' in server;
}
