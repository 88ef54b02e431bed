import { createHttpApp, detailStyle, type HttpApp, type RouteSpec } from '../lib/http/index.js';
import type { Logger } from '../lib/log/index.js';
import { systemClock, type Clock } from './dispatch/clock.js';
import type { Dispatcher } from './dispatch/dispatcher.js';
import { registerQueueMetrics, type DispatchQueue } from './dispatch/dispatch-queue.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './dispatch/run-tool.js';
import type { McpManager } from './mcp/mcp-manager.js';
import { mcpRoutes } from './routes/mcp-routes.js';
import { dispatchRoutes } from './routes/dispatch-routes.js';
import { infoRoutes } from './routes/info-routes.js';
import { toolRoutes } from './routes/tool-routes.js';
import type { SubscriptionStore } from './subscriptions/subscription-store.js';
import type { ToolRegistry } from './tools/registry.js';

/** Base path of every route of the service (the contract's `/api/v1`), given to the HTTP kit. */
export const API_BASE_PATH = '/api/v1';

/** The stream routes the event hub contributes (GET /api/v1/events, the documented GET /api/v1/ws). */
export interface StreamRoutes {
  sseRoute(): RouteSpec;
  wsRoute?(): RouteSpec;
}

/** Everything the HTTP surface needs; main.ts builds the real ones, tests their own. */
export interface AlertDispatchDeps {
  logger: Logger;
  dispatcher: Dispatcher;
  /** The bounded queue POST /alerts hands its dispatches to. */
  intake: DispatchQueue;
  registry: ToolRegistry;
  subscriptions: SubscriptionStore;
  agentEnabled: boolean;
  mcp?: McpManager;
  streams?: StreamRoutes;
  /** Time-out and retries of manual tool invocations. */
  policy?: RetryPolicy;
  clock?: Clock;
  /** Largest JSON body (koa-body syntax); default 20mb so image payloads fit. */
  bodyLimit?: string;
}

/** Builds the alert dispatch Koa app (no listen). */
export function createApp(deps: AlertDispatchDeps): HttpApp {
  const clock = deps.clock ?? systemClock;
  const routes: RouteSpec[] = [
    ...dispatchRoutes(deps.dispatcher, deps.intake, clock),
    ...toolRoutes({
      registry: deps.registry,
      subscriptions: deps.subscriptions,
      logger: deps.logger,
      policy: deps.policy ?? DEFAULT_RETRY_POLICY,
      clock,
      shutdown: deps.dispatcher.signal,
    }),
    ...infoRoutes({
      subscriptions: deps.subscriptions,
      agentEnabled: deps.agentEnabled,
      mcpEnabled: () => deps.mcp?.status().enabled ?? false,
      clock,
      startedAt: performance.now(),
    }),
    ...(deps.streams ? [deps.streams.sseRoute(), ...(deps.streams.wsRoute ? [deps.streams.wsRoute()] : [])] : []),
    ...(deps.mcp ? mcpRoutes(deps.mcp, '') : []),
  ];
  const http = createHttpApp({
    info: {
      title: 'Argus alert dispatch',
      version: '1.0.0',
      description: 'Alert ingestion, rule- or agent-based dispatch of action tools, SSE/WebSocket fan-out, MCP tools.',
      tags: {
        dispatch: 'Alerts and action requests in; the tools chosen for them run',
        tools: 'The action tools: list, reload, invoke one directly',
        subscriptions: 'Which tools each alert name triggers (the subscriptions file)',
        health: 'Liveness',
        events: 'Dispatch results streamed over Server-Sent Events and WebSocket',
        mcp: 'Tools of the configured MCP servers',
      },
    },
    service: 'alert-dispatch',
    logger: deps.logger,
    errors: detailStyle(),
    routes,
    basePath: API_BASE_PATH,
    jsonLimit: deps.bodyLimit ?? '20mb',
  });
  registerQueueMetrics(http.metrics.registry, deps.intake);
  return http;
}
