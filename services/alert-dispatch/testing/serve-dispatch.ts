import { listen, type RunningServer } from '../../lib/http/index.js';
import type { Logger } from '../../lib/log/index.js';
import { createApp } from '../app.js';
import { DedupStore } from '../dispatch/dedup.js';
import { Dispatcher } from '../dispatch/dispatcher.js';
import { DispatchQueue } from '../dispatch/dispatch-queue.js';
import type { RetryPolicy } from '../dispatch/run-tool.js';
import { systemClock, type Clock } from '../dispatch/clock.js';
import type { EventPublisher } from '../dispatch/dispatcher.js';
import type { McpManager } from '../mcp/mcp-manager.js';
import type { SubscriptionStore } from '../subscriptions/subscription-store.js';
import type { ToolRegistry } from '../tools/registry.js';

/** What a test serves the alert-dispatch app with (the embedded defaults otherwise: no agent, no events, 4 workers). */
export interface ServeDispatchOptions {
  logger: Logger;
  registry: ToolRegistry;
  subscriptions: SubscriptionStore;
  policy: RetryPolicy;
  mcp?: McpManager;
  clock?: Clock;
  events?: EventPublisher;
  concurrency?: number;
  bodyLimit?: string;
  name: string;
}

/** Test support: the app over a real dispatcher (in-memory dedup) and intake queue, listening on 127.0.0.1. */
export async function serveDispatch(
  options: ServeDispatchOptions,
): Promise<{ server: RunningServer; dispatcher: Dispatcher }> {
  const { logger, registry, subscriptions, policy, mcp, clock } = options;
  const dispatcher = new Dispatcher({
    registry,
    subscriptions,
    dedup: new DedupStore(clock ?? systemClock),
    events: options.events ?? { publish: () => undefined },
    logger,
    policy,
    clock,
  });
  const { app } = createApp({
    logger,
    dispatcher,
    intake: new DispatchQueue(dispatcher, { concurrency: options.concurrency ?? 4, maxLength: 16, logger }),
    registry,
    subscriptions,
    agentEnabled: false,
    mcp,
    policy,
    clock,
    bodyLimit: options.bodyLimit,
  });
  const server = await listen(app, { port: 0, host: '127.0.0.1', logger, name: options.name });
  return { server, dispatcher };
}
