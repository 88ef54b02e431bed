import Joi from 'joi';
import { defineRoute, HttpError, roundMs, type ErrorMapping, type RouteSpec } from '../../lib/http/index.js';
import { errorBody } from './response-schemas.js';
import { McpCallError, McpConfigError, McpServerUnavailableError, McpToolNotFoundError } from '../mcp/errors.js';
import type { McpManager } from '../mcp/mcp-manager.js';

const serverStatus = Joi.object({
  name: Joi.string().required(),
  connected: Joi.boolean().required(),
  tool_count: Joi.number().integer().required(),
  transport: Joi.string().valid('stdio', 'http').required(),
  last_error: Joi.string().description('Latest connection or transport failure, while it persists'),
});

const statusBody = Joi.object({
  enabled: Joi.boolean().required().description('True when at least one MCP server is configured'),
  servers: Joi.array().items(serverStatus).required(),
  total_tools: Joi.number().integer().required(),
});

const toolInfo = Joi.object({
  name: Joi.string()
    .required()
    .description('Registry name `<server>__<tool>`, sanitised to [A-Za-z0-9_-], at most 64 characters'),
  server: Joi.string().required(),
  tool: Joi.string().required().description("The tool's own name on its server"),
  description: Joi.string().allow('').required(),
  inputSchema: Joi.object().unknown(true).required().description('JSON Schema of the arguments'),
});

const invokeResult = Joi.object({
  name: Joi.string().required(),
  server: Joi.string(),
  tool: Joi.string(),
  is_error: Joi.boolean().required().description('True when the tool ran and reported a failure'),
  content: Joi.array().items(Joi.object().unknown(true)).required().description('MCP content blocks'),
  structured_content: Joi.object().unknown(true),
  duration_ms: Joi.number().required(),
});

/** McpManager errors as HTTP statuses (the routes' `mapError`); the app's detailStyle renders `{detail}`. */
const mapMcpError: ErrorMapping = (err) => {
  if (err instanceof McpToolNotFoundError) return new HttpError(404, err.message);
  if (err instanceof McpServerUnavailableError) return new HttpError(503, err.message, { 'Retry-After': '1' });
  if (err instanceof McpConfigError) return new HttpError(422, err.message);
  if (err instanceof McpCallError) {
    const status = err.kind === 'invalid_arguments' ? 400 : err.kind === 'timeout' ? 504 : 502;
    return new HttpError(status, `MCP tool call failed: ${err.message}`);
  }
  return undefined;
};

/** Routes of MCP inspection and manual invocation; `prefix` is `/api/v1` unless the app's basePath already has it. */
export function mcpRoutes(manager: McpManager, prefix = '/api/v1'): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: `${prefix}/mcp/status`,
      summary: 'Connection status of configured MCP servers',
      tags: ['mcp'],
      responses: { 200: { description: 'MCP status', schema: statusBody } },
      handler: (ctx) => {
        ctx.body = manager.status();
      },
    }),
    defineRoute({
      method: 'get',
      path: `${prefix}/mcp/tools`,
      summary: 'Tools discovered on connected MCP servers',
      tags: ['mcp'],
      responses: {
        200: {
          description: 'Tool list',
          schema: Joi.object({
            tools: Joi.array().items(toolInfo).required(),
            count: Joi.number().integer().required(),
          }),
        },
      },
      handler: (ctx) => {
        const tools = manager.tools();
        ctx.body = { tools, count: tools.length };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${prefix}/mcp/reload`,
      summary: 'Re-read the MCP configuration, reconnect every server and refresh the tool registry',
      description: 'An invalid configuration file is answered 422 naming every problem; the running servers are kept.',
      tags: ['mcp'],
      responses: {
        200: { description: 'Status after reconnecting', schema: statusBody },
        422: { description: 'Invalid configuration file', schema: errorBody },
      },
      mapError: mapMcpError,
      handler: async (ctx) => {
        ctx.body = await manager.reload();
      },
    }),
    defineRoute({
      method: 'post',
      path: `${prefix}/mcp/tools/:name/invoke`,
      summary: 'Invoke an MCP tool by its registry name',
      description:
        'A tool that ran and failed answers 200 with `is_error: true`. Protocol failures: 400 arguments rejected by ' +
        'the server, 502 other server errors, 504 time-out.',
      tags: ['mcp'],
      request: {
        params: Joi.object<{ name: string }, true>({ name: Joi.string().max(200).required() }),
        body: Joi.object<{ arguments: Record<string, unknown> }, true>({
          arguments: Joi.object().unknown(true).default({}),
        }),
      },
      responses: {
        200: { description: 'Tool result', schema: invokeResult },
        400: { description: 'Arguments rejected by the MCP server', schema: errorBody },
        404: { description: 'Unknown MCP tool', schema: errorBody },
        502: { description: 'The MCP server failed the call', schema: errorBody },
        503: { description: 'The tool server is disconnected (reconnecting)', schema: errorBody },
        504: { description: 'The tool call timed out', schema: errorBody },
      },
      mapError: mapMcpError,
      handler: async (ctx) => {
        const name = ctx.state.params.name;
        const tool = manager.tools().find((t) => t.name === name);
        // A client that goes away cancels the call on the MCP server too.
        const abort = new AbortController();
        const onClose = () => {
          if (!ctx.res.writableFinished) abort.abort();
        };
        ctx.res.once('close', onClose);
        const started = performance.now();
        try {
          const result = await manager.invoke(name, ctx.state.body.arguments, abort.signal);
          const body: Record<string, unknown> = {
            name,
            server: tool?.server,
            tool: tool?.tool,
            is_error: result.isError,
            content: result.content,
            duration_ms: roundMs(performance.now() - started),
          };
          if (result.structuredContent !== undefined) body.structured_content = result.structuredContent;
          ctx.body = body;
        } finally {
          ctx.res.off('close', onClose);
        }
      },
    }),
  ];
}
