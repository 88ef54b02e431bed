import { randomUUID } from 'node:crypto';
import Joi from 'joi';
import { defineRoute, HttpError, type RouteSpec } from '../../lib/http/index.js';
import type { Logger } from '../../lib/log/index.js';
import { isoWithOffset, type Clock } from '../dispatch/clock.js';
import { runTool, type RetryPolicy } from '../dispatch/run-tool.js';
import { actionRequestSchema, toolNameSchema } from '../dispatch/schemas.js';
import type { ActionRequest, ReceivedActionRequest } from '../dispatch/types.js';
import type { SubscriptionStore } from '../subscriptions/subscription-store.js';
import type { ToolRegistry } from '../tools/registry.js';
import { errorBody, toolInfoBody } from './response-schemas.js';

/** Collaborators of the tool routes. */
export interface ToolRouteDeps {
  registry: ToolRegistry;
  subscriptions: SubscriptionStore;
  logger: Logger;
  policy: RetryPolicy;
  clock: Clock;
  /** The service's shutdown signal: a manual run is aborted with the dispatches. */
  shutdown?: AbortSignal;
}

/** The alert a manual invocation runs for: an action request whose source_id and alert_name default to `manual`. */
const invocationAlertSchema = actionRequestSchema.fork(['source_id', 'alert_name'], (s) =>
  s.optional().default('manual'),
);

/** The body of POST /tools/{name}/invoke, as validated. */
interface InvokeBody {
  arguments: Record<string, unknown>;
  alert: ReceivedActionRequest;
}

const invokeBody = Joi.object<InvokeBody, true>({
  arguments: Joi.object()
    .unknown(true)
    .default({})
    .description("The tool's arguments (e.g. {url} for trigger_webhook)"),
  alert: invocationAlertSchema.default().description('Alert the tool acts on; every action request field is optional'),
});

const invokeResult = Joi.object({
  tool: Joi.string().required(),
  success: Joi.boolean().required(),
  attempts: Joi.number().integer().required(),
  duration_ms: Joi.number().required(),
  result: Joi.object().unknown(true).allow(null).required().description('What the tool returned (e.g. snapshot_path)'),
  error: Joi.string().allow(null).required(),
});

/** GET /tools, POST /tools/{name}/invoke, POST /tools/reload. */
export function toolRoutes(deps: ToolRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/tools',
      summary: 'List registered tools (built-in and MCP)',
      tags: ['tools'],
      responses: {
        200: {
          description: 'Tool list',
          schema: Joi.object({ tools: Joi.array().items(toolInfoBody).required(), count: Joi.number().required() }),
        },
      },
      handler: (ctx) => {
        const tools = deps.registry.list();
        ctx.body = { tools, count: tools.length };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/tools/reload',
      summary: 'Reload the subscriptions file (tool defaults, arguments, dedup, escalation)',
      description: 'A file that fails validation is rejected with 422 and the previous entries stay in force.',
      tags: ['tools'],
      responses: {
        200: {
          description: 'Reloaded',
          schema: Joi.object({
            status: Joi.string().valid('reloaded').required(),
            file: Joi.string().allow(null).required(),
            subscriptions: Joi.number().required(),
            tools: Joi.number().required(),
            loaded_at: Joi.string().allow(null).required(),
          }),
        },
        422: { description: 'File rejected; previous entries kept', schema: errorBody },
      },
      handler: async (ctx) => {
        const outcome = await deps.subscriptions.reload();
        if (!outcome.ok) {
          throw new HttpError(
            422,
            `subscriptions file rejected (kept ${outcome.count} previous entries): ${outcome.error}`,
          );
        }
        ctx.body = {
          status: 'reloaded',
          file: outcome.file,
          subscriptions: outcome.count,
          tools: deps.registry.list().length,
          loaded_at: outcome.loaded_at,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/tools/:name/invoke',
      summary: 'Manually invoke a built-in tool',
      description:
        'Runs one built-in tool once (same time-out and retries as a dispatch) for the given alert. 200 with ' +
        '`success` false when the tool ran and failed; 403 when it refused its arguments (a webhook URL outside ' +
        'WEBHOOK_URL_ALLOW) and sent nothing. MCP tools are invoked through /api/v1/mcp/tools/{name}/invoke.',
      tags: ['tools'],
      request: { params: Joi.object<{ name: string }, true>({ name: toolNameSchema.required() }), body: invokeBody },
      responses: {
        200: { description: 'The tool ran', schema: invokeResult },
        403: {
          description: 'The tool refused its arguments and sent nothing (a webhook URL outside WEBHOOK_URL_ALLOW)',
          schema: errorBody,
        },
        404: { description: 'No built-in tool of that name', schema: errorBody },
        409: { description: 'The tool is disabled (its environment variable is not set)', schema: errorBody },
        422: { description: 'Invalid body', schema: errorBody },
      },
      handler: async (ctx) => {
        const name = ctx.state.params.name;
        const tool = deps.registry.builtin(name);
        if (!tool) {
          const hint = deps.registry.get(name) ? ' (an MCP tool: use /api/v1/mcp/tools/{name}/invoke)' : '';
          throw new HttpError(404, `Unknown built-in tool: ${name}${hint}`);
        }
        const args = ctx.state.body.arguments;
        if (!tool.runnable(args)) {
          throw new HttpError(409, `Tool ${name} is disabled: set ${tool.requiresEnv.join(', ')}`);
        }
        const alert = ctx.state.body.alert;
        const request: ActionRequest = {
          ...alert,
          event_id: alert.event_id ?? randomUUID(),
          timestamp: alert.timestamp ?? isoWithOffset(deps.clock()),
        };
        const r = await runTool(tool, {
          request,
          args,
          snapshotPath: null,
          logger: deps.logger,
          policy: deps.policy,
          signal: deps.shutdown,
        });
        if (r.refused) throw new HttpError(403, `Tool ${name} ${r.error}`);
        ctx.body = {
          tool: name,
          success: r.success,
          attempts: r.attempts,
          duration_ms: r.duration_ms,
          result: r.output ?? null,
          error: r.error ?? null,
        };
      },
    }),
  ];
}
