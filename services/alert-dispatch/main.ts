import { listen, type StopOptions } from '../lib/http/index.js';
import { createLogger, type Logger } from '../lib/log/index.js';
import { API_BASE_PATH, createApp } from './app.js';
import type { AlertDispatchConfig } from './config.js';
import { ToolAgent } from './dispatch/agent.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { DispatchQueue } from './dispatch/dispatch-queue.js';
import { systemClock } from './dispatch/clock.js';
import type { RetryPolicy } from './dispatch/run-tool.js';
import { McpManager } from './mcp/mcp-manager.js';
import { openReplication } from './shared/replication.js';
import { EventHub } from './streams/event-hub.js';
import { SubscriptionStore } from './subscriptions/subscription-store.js';
import { captureSnapshotTool } from './tools/capture-snapshot.js';
import { logAlertTool } from './tools/log-alert.js';
import { publishMqttTool } from './tools/publish-mqtt.js';
import { ToolRegistry } from './tools/registry.js';
import { triggerWebhookTool } from './tools/trigger-webhook.js';

/** A running alert dispatch service. */
export interface RunningAlertDispatch {
  url: string;
  /** Stops intake, drains, closes; by `deadline` where one is given. */
  close(options?: StopOptions): Promise<void>;
}

/**
 * Starts the alert dispatch service from its validated configuration (`env` fills `${NAME}` in the MCP file): loads
 * subscriptions (and watches the file), connects MCP servers, listens, attaches the WebSocket stream. close() stops
 * intake, lets dispatches finish for the drain grace, then aborts what still runs (tools, back-offs, model calls;
 * queued alerts are dropped), closes streams, MCP and MQTT.
 */
export async function startAlertDispatch(
  config: AlertDispatchConfig,
  env: NodeJS.ProcessEnv,
  logger?: Logger,
): Promise<RunningAlertDispatch> {
  const log =
    logger ??
    createLogger({ service: 'alert-dispatch', level: config.platform.logLevel, json: config.platform.logJson });
  const clock = systemClock;
  const policy: RetryPolicy = config.tools;
  // First: an unreachable ARGUS_REDIS_URL stops start-up before anything else is opened.
  const replication = await openReplication(config, clock, log);

  const mqtt = publishMqttTool({ brokerUrl: config.mqttBroker, topicTemplate: config.mqttTopic, logger: log });
  // `${NAME}` in the MCP file is replaced from the service's environment (tokens stay out of the file).
  const mcp = new McpManager({ configFile: config.mcpConfigFile, logger: log, environment: env });
  const registry = new ToolRegistry(
    [
      logAlertTool(),
      triggerWebhookTool({ defaultUrl: config.webhookUrl, allow: config.webhookUrlAllow }),
      captureSnapshotTool({ directory: config.snapshotDir, now: clock }),
      mqtt,
    ],
    mcp,
  );
  const subscriptions = new SubscriptionStore(config.subscriptionsFile, log);
  const initial = await subscriptions.reload();
  if (!initial.ok) log.error('starting without subscriptions', { error: initial.error });
  subscriptions.watch();

  try {
    await mcp.start(); // an invalid MCP file stops start-up, like any invalid configuration
  } catch (err) {
    subscriptions.close();
    await Promise.allSettled([mcp.close(), replication.close()]);
    throw err;
  }

  const agent = config.llm ? new ToolAgent({ ...config.llm, logger: log }) : undefined;
  const hub = new EventHub({
    logger: log,
    keepaliveMs: config.keepaliveMs,
    wsPath: `${API_BASE_PATH}/ws`,
    serviceInfo: {
      service: 'alert-dispatch',
      version: '1.0.0',
      adk_enabled: Boolean(agent),
      mcp_enabled: mcp.status().enabled,
    },
    replay: replication.replay,
  });
  const events = replication.events(hub);
  await replication.start();
  const dispatcher = new Dispatcher({
    registry,
    subscriptions,
    dedup: replication.dedup,
    escalationCounter: replication.escalationCounter,
    events,
    logger: log,
    agent,
    policy,
    clock,
  });
  const intake = new DispatchQueue(dispatcher, { ...config.queue, logger: log });
  const { app } = createApp({
    logger: log,
    dispatcher,
    intake,
    registry,
    subscriptions,
    agentEnabled: Boolean(agent),
    mcp,
    streams: hub,
    policy,
    clock,
    bodyLimit: config.bodyLimit,
  });
  // The drain grace, cut short where the caller's deadline (SIGTERM's one deadline) leaves less.
  let drainMs = config.drainGraceMs;
  const server = await listen(app, {
    port: config.port,
    host: config.host,
    logger: log,
    name: 'alert-dispatch',
    apiKeys: config.platform.apiKeys,
    beforeClose: [() => dispatcher.drain(drainMs), () => hub.close()],
  });
  hub.attach(server.server);
  log.info('alert dispatch ready', {
    agent: Boolean(agent),
    model: config.llm?.model,
    webhook: Boolean(config.webhookUrl),
    mqtt: Boolean(config.mqttBroker),
    subscriptions: initial.count,
    shared_state: replication.backend,
  });

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    close: (stop: StopOptions = {}) =>
      (closing ??= (async () => {
        if (stop.deadline !== undefined) drainMs = drainWithin(config.drainGraceMs, stop.deadline - Date.now());
        subscriptions.close();
        await server.close(stop);
        await Promise.allSettled([mcp.close(), mqtt.close(), replication.close()]);
      })()),
  };
}

/**
 * How long dispatches may drain when `remainingMs` are left until the deadline: the configured grace, but never more
 * than three quarters of what is left, so streams, MCP servers and MQTT still close in time.
 */
export function drainWithin(graceMs: number, remainingMs: number): number {
  return Math.max(0, Math.min(graceMs, Math.floor(remainingMs * 0.75)));
}
