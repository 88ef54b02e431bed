import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from '../../lib/log/index.js';
import { alertSummary, NO_PARAMETERS, ToolError, type DispatchTool } from './tool.js';

/** Options of the MQTT tool. */
export interface MqttToolOptions {
  /** MQTT_BROKER, e.g. mqtt://127.0.0.1:1883; the tool is disabled without it. */
  brokerUrl?: string;
  /** Topic template; `{source_id}` and `{alert_name}` are replaced (default `argus/alerts/{source_id}`). */
  topicTemplate: string;
  qos?: 0 | 1 | 2;
  logger: Logger;
}

/** An MQTT tool plus the way to close its long-lived connection. */
export interface MqttTool extends DispatchTool {
  close(): Promise<void>;
}

/** Topic levels must not contain wildcards or separators coming from alert fields. */
const topicLevel = (value: string) => value.replace(/[+#/]/g, '_').split('\0').join('_') || '_';

/** Renders the topic template for one alert. */
export function renderTopic(template: string, fields: { source_id: string; alert_name: string }): string {
  return template
    .replace(/\{source_id\}/g, topicLevel(fields.source_id))
    .replace(/\{alert_name\}/g, topicLevel(fields.alert_name));
}

/**
 * `publish_mqtt`: publishes the alert summary as JSON with QoS 1 (by default) over one client created on first use
 * and reused; mqtt.js reconnects it on its own. The topic is `tool_arguments.publish_mqtt.topic`, else the template.
 */
export function publishMqttTool(options: MqttToolOptions): MqttTool {
  let client: MqttClient | undefined;
  let connecting: Promise<void> | undefined;
  // One shared wait per outage, so waiting publishers do not pile up listeners; reconnection is mqtt.js's job.
  const connected = (c: MqttClient) =>
    (connecting ??= new Promise<void>((resolve) =>
      c.once('connect', () => {
        connecting = undefined;
        resolve();
      }),
    ));
  const connection = () => {
    if (!client) {
      client = mqtt.connect(options.brokerUrl!, {
        reconnectPeriod: 1000,
        connectTimeout: 5000,
        clientId: `argus-alert-dispatch-${process.pid}-${Date.now()}`,
      });
      client.on('error', (err) => options.logger.warn('mqtt client error', { error: err.message }));
    }
    return client;
  };
  return {
    name: 'publish_mqtt',
    description: 'Publish the alert as JSON to the MQTT broker (MQTT_BROKER), QoS 1.',
    requiresEnv: ['MQTT_BROKER'],
    source: 'builtin',
    parameters: NO_PARAMETERS,
    enabled: () => Boolean(options.brokerUrl),
    runnable: () => Boolean(options.brokerUrl),
    async run({ request, args, snapshotPath, signal }) {
      const topic = typeof args.topic === 'string' ? args.topic : renderTopic(options.topicTemplate, request);
      if (!topic || /[+#]/.test(topic) || topic.includes('\0'))
        throw new ToolError('mqtt topic must be non-empty and free of wildcards', false);
      const qos = options.qos ?? 1;
      const body = JSON.stringify({ event: 'alert', ...alertSummary(request, snapshotPath) });
      const conn = connection();
      const aborted = new Promise<never>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
      aborted.catch(() => undefined);
      try {
        // Wait for the connection first: mqtt.js would queue the message while offline, and a retry after a
        // time-out would then queue it twice.
        if (!conn.connected) await Promise.race([connected(conn), aborted]);
        await Promise.race([conn.publishAsync(topic, body, { qos }), aborted]);
      } catch (err) {
        if (signal.aborted) throw err;
        throw new ToolError(`mqtt publish failed: ${(err as Error).message}`, true);
      }
      return { topic, qos };
    },
    async close() {
      const c = client;
      client = undefined;
      await c?.endAsync(true);
    },
  };
}
